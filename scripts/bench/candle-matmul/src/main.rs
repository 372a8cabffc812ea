//! `candle-matmul [--shape M,N,K] [--threads N] [--repeat R] [--kernels NAME] [--json]`: natively,
//! candle-core's quantized matrix product beside ours (see the library's doc; the browser runs the
//! same sweep through `scripts/bench-candle.sh`).

use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("candle-matmul: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let (mut shape, mut threads, mut reps, mut kernels, mut json) = ("512,1536,1536".to_string(), 0usize, 3usize, None, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--shape" => shape = value()?,
            "--threads" => threads = value()?.parse().map_err(|_| "--threads takes a number")?,
            "--repeat" => reps = value()?.parse().map_err(|_| "--repeat takes a number")?,
            "--kernels" => kernels = Some(value()?),
            "--json" => json = true,
            _ => return Err(format!("unknown argument {a}; takes --shape M,N,K --threads N --repeat R --kernels NAME --json")),
        }
    }
    let dims: Vec<usize> = shape.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>().map_err(|_| "--shape takes M,N,K")?;
    let [m, n, k] = dims[..] else { return Err("--shape takes M,N,K, e.g. 512,1536,1536".into()) };
    if threads == 0 {
        threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    }
    // candle parallelises on rayon's global pool; ours on its own pool of the same size.
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let now = || start.elapsed().as_secs_f64() * 1e3;
    let r = candle_matmul::sweep(m, n, k, reps, threads, kernels.as_deref(), &now)?;
    if json {
        println!("{r}");
    } else {
        print!("{}", candle_matmul::table(&r));
    }
    Ok(())
}
