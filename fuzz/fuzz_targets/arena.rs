#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| rocketjudge_fuzz::arena(data));
