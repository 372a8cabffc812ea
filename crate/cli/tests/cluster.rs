//! The cluster recipes, run for real.
//!
//! Slurm: a single-node cluster (munged, slurmctld, slurmd from Debian's packages, started by
//! `scripts/cluster/slurm/local-cluster.sh` in a temporary folder) runs `submit.sh`: an array job of
//! 3 shards grading nine MT-Bench demo responses of three models with the SmolLM2 test judge, and the
//! merge-and-rank job after it. The merged judgments must be byte for byte those of one unsharded
//! `grade`, and the ranking `rank`'s on them. Then a second run whose shard 1 is cancelled by Slurm
//! mid-run (after its first judgment line): the merge job that follows refuses and names the shard;
//! `submit.sh --only 1` resubmits it, it resumes (it says so, and grades only what was missing), and
//! the new merge job's judgments are again the unsharded run's. The throughput of the node is printed.
//!
//! Kubernetes: `scripts/cluster/k8s/render.sh` renders the volume, loader, Indexed Job and merge
//! Job manifests, which must pass `kubernetes-validate --strict` (the API's published schemas);
//! manifests broken on purpose must fail it.
//!
//! Where the Slurm packages or the validator are missing the tests say so and skip, except in CI
//! (`CI` set), where scripts/test.sh installs them and a missing one is a failure.

#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

mod common;
use common::{inputs, jsonl_files, judge_inputs, model_path, root, THREE_MODELS};

/// Skip with `why`, or fail in CI, where everything the test needs is installed by scripts/test.sh.
fn unavailable(why: &str) {
    assert!(std::env::var_os("CI").is_none(), "{why}; scripts/test.sh installs it, so in CI this is a failure");
    eprintln!("skipped: {why}");
}

fn run(c: &mut Command) -> Output {
    let o = c.output().unwrap_or_else(|e| panic!("cannot run {c:?}: {e}"));
    assert!(
        o.status.success(),
        "{c:?} failed ({}):\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A running single-node Slurm cluster, stopped when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    fn script() -> PathBuf {
        root().join("scripts/cluster/slurm/local-cluster.sh")
    }

    fn start(dir: &Path) -> Cluster {
        run(Command::new(Self::script()).arg("start").arg(dir));
        Cluster { dir: dir.to_path_buf(), conf: dir.join("slurm.conf") }
    }

    /// A Slurm command against this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// Wait until no job named `name` is pending or running.
    fn wait_for(&self, name: &str, limit: Duration) {
        let start = Instant::now();
        loop {
            let o = run(self.cmd("squeue").args(["-h", "-o", "%i %T", "-n", name]));
            if text(&o).trim().is_empty() {
                return;
            }
            assert!(start.elapsed() < limit, "jobs {name} still queued after {limit:?}:\n{}", text(&o));
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `scontrol show job ID`'s `key=value` field.
    fn job_field(&self, id: &str, key: &str) -> String {
        let o = run(self.cmd("scontrol").args(["show", "job", "-o", id]));
        let out = text(&o);
        let prefix = format!("{key}=");
        out.split_whitespace()
            .find_map(|f| f.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {key} in scontrol's answer for job {id}: {out}"))
            .to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).arg("stop").arg(&self.dir).status();
    }
}

/// Why Slurm cannot run here, if it cannot.
fn slurm_missing() -> Option<String> {
    for b in ["munged", "slurmctld", "slurmd", "sbatch"] {
        if !Command::new("sh").args(["-c", &format!("command -v {b}")]).output().is_ok_and(|o| o.status.success()) {
            return Some(format!("{b} is not installed (apt-get install munge slurmctld slurmd slurm-client)"));
        }
    }
    let uid = Command::new("id").arg("-u").output().map(|o| text(&o)).unwrap_or_default();
    (uid.trim() != "0").then(|| "the local Slurm cluster needs root (slurmd runs the jobs)".to_string())
}

/// One `submit.sh` run: the job ids it printed (grading array, merge).
fn submit(cluster: &Cluster, queries: &Path, responses: &Path, out: &Path, extra: &[&str]) -> (String, String) {
    let mut c = cluster.cmd("bash");
    c.arg(root().join("scripts/cluster/slurm/submit.sh")).args(["--shards", "3"]);
    judge_inputs(&mut c, queries, responses, out).args(["--threads", "1"]).args(extra).env("RJ_BIN", env!("CARGO_BIN_EXE_rocketjudge"));
    let said = text(&run(&mut c));
    // "grading: array job A (shards …); merge and rank: job M, after …"
    let word_after = |w: &str| said.split(w).nth(1).and_then(|s| s.split_whitespace().next()).map(|s| s.trim_end_matches(',').to_string());
    let (array, merge) = (word_after("array job"), word_after("merge and rank: job"));
    (array.unwrap_or_else(|| panic!("no array job id in: {said}")), merge.unwrap_or_else(|| panic!("no merge job id in: {said}")))
}

/// Complete judgment lines in all of shard `i`'s files in `dir`.
fn graded(dir: &Path, i: usize) -> usize {
    let tag = format!(".shard-{i}-of-3.jsonl");
    std::fs::read_dir(dir)
        .map(|es| {
            es.map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(&tag))
                .map(|p| std::fs::read(p).unwrap().iter().filter(|&&c| c == b'\n').count())
                .sum()
        })
        .unwrap_or(0)
}

fn log(out: &Path, name: &str) -> String {
    std::fs::read_to_string(out.join("logs").join(name)).unwrap_or_else(|e| panic!("no log {name} in {}: {e}", out.display()))
}

fn ranking(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The reference: one unsharded `grade` into `out` (one thread, as each shard has), and `rank`'s
/// JSON of it.
fn unsharded(queries: &Path, responses: &Path, out: &Path) -> serde_json::Value {
    let rj = || Command::new(env!("CARGO_BIN_EXE_rocketjudge"));
    run(judge_inputs(rj().args(["grade", "--threads", "1"]), queries, responses, out));
    serde_json::from_slice(&run(rj().args(["rank", "--format", "json", "--judgments"]).arg(out)).stdout).unwrap()
}

#[test]
fn slurm_array_grades_shards_like_one_run_and_a_cancelled_shard_resumes() {
    if let Some(why) = slurm_missing() {
        return unavailable(&why);
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (queries, responses) = inputs(d, THREE_MODELS);
    let total: usize = THREE_MODELS.iter().map(|(_, ids)| ids.len()).sum();

    let reference = d.join("reference");
    let reference_ranking = unsharded(&queries, &responses, &reference);

    let cluster = Cluster::start(&d.join("cluster"));
    let limit = Duration::from_secs(600);

    // A clean run: 3 shards on the node's CPUs, then merge and rank.
    let clean = d.join("clean");
    let started = Instant::now();
    let (array, merge) = submit(&cluster, &queries, &responses, &clean, &[]);
    cluster.wait_for("rocketjudge-clean", limit);
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(cluster.job_field(&merge, "JobState"), "COMPLETED", "merge job: {}", log(&clean, &format!("merge-{merge}.log")));
    assert_eq!(jsonl_files(&clean.join("judgments")), jsonl_files(&reference), "Slurm's merged judgments differ from one unsharded run");
    assert_eq!(ranking(&clean.join("ranking.json")), reference_ranking);
    for i in 0..3 {
        assert_eq!(cluster.job_field(&format!("{array}_{i}"), "JobState"), "COMPLETED");
        assert!(log(&clean, &format!("grade-{array}_{i}.log")).contains(&format!("shard {i}/3 is complete")));
    }
    let cpus = cluster.job_field(&format!("{array}_0"), "NumCPUs");
    eprintln!(
        "slurm throughput: {total} responses in {wall:.1} s from submission to ranking on one node ({} CPUs, 3 shards of {cpus} CPU): {:.1} responses/min",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        total as f64 / wall * 60.0
    );

    // Shard 1 cancelled by Slurm after its first judgment line.
    let cancelled = d.join("cancelled");
    let (array, first_merge) = submit(&cluster, &queries, &responses, &cancelled, &[]);
    let shards = cancelled.join("shards");
    let record1 = cancelled.join("shards/.rocketjudge.shard-1-of-3.done");
    let start = Instant::now();
    while graded(&shards, 1) == 0 {
        assert!(start.elapsed() < limit, "shard 1 wrote nothing in {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    run(cluster.cmd("scancel").arg(format!("{array}_1")));
    cluster.wait_for("rocketjudge-cancelled", limit);
    assert!(!record1.exists(), "shard 1 finished before it was cancelled: the test did not interrupt it");
    assert_eq!(cluster.job_field(&format!("{array}_1"), "JobState"), "CANCELLED");
    let graded_before = graded(&shards, 1);
    let first = log(&cancelled, &format!("merge-{first_merge}.log"));
    assert_eq!(cluster.job_field(&first_merge, "JobState"), "FAILED", "{first}");
    assert!(first.contains("shard 1/3 did not finish") && first.contains("gpt-4.shard-1-of-3.jsonl"), "{first}");
    assert!(
        !cancelled.join("judgments").exists() || jsonl_files(&cancelled.join("judgments")).is_empty(),
        "a refused merge wrote judgments"
    );

    let (again, merge) = submit(&cluster, &queries, &responses, &cancelled, &["--only", "1"]);
    cluster.wait_for("rocketjudge-cancelled", limit);
    let resumed = log(&cancelled, &format!("grade-{again}_1.log"));
    assert!(
        resumed.contains(&format!("resuming: {graded_before} of 3 responses are already graded")),
        "the resubmitted shard did not resume from its {graded_before} graded responses:\n{resumed}"
    );
    assert!(resumed.contains(&format!("graded {} responses", 3 - graded_before)), "{resumed}");
    assert_eq!(cluster.job_field(&merge, "JobState"), "COMPLETED", "{}", log(&cancelled, &format!("merge-{merge}.log")));
    assert_eq!(
        jsonl_files(&cancelled.join("judgments")),
        jsonl_files(&reference),
        "after the resubmitted shard, the merge differs from one run"
    );
    assert_eq!(ranking(&cancelled.join("ranking.json")), reference_ranking);
}

/// The Kubernetes manifest validator (kubernetes-validate, in the venv scripts/test.sh makes).
fn validator() -> Option<PathBuf> {
    let v = root().join(".cache/cluster-venv/bin/kubernetes-validate");
    v.exists().then_some(v)
}

/// A rendered manifest as JSON (PyYAML from the validator's venv).
fn manifest(file: &Path) -> serde_json::Value {
    let python = validator().unwrap().with_file_name("python");
    let o = run(Command::new(python)
        .args(["-c", "import sys, json, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)"])
        .arg(file));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Run a Job's container as its pod would (`command` + `args`, the container's env, `extra` env),
/// with the volume's mount path /data standing for the folder `data`.
fn run_container(job: &serde_json::Value, data: &Path, extra: &[(&str, String)]) -> Output {
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/data");
    let here = |s: &str| s.replace("/data", data.to_str().unwrap());
    let argv: Vec<String> =
        c["command"].as_array().unwrap().iter().chain(c["args"].as_array().unwrap()).map(|a| here(a.as_str().unwrap())).collect();
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    for e in c["env"].as_array().into_iter().flatten() {
        cmd.env(e["name"].as_str().unwrap(), here(e["value"].as_str().unwrap()));
    }
    cmd.envs(extra.iter().map(|(k, v)| (k, v)));
    run(&mut cmd)
}

#[test]
fn kubernetes_manifests_validate_and_their_pods_grade_like_one_run() {
    let Some(validate) = validator() else {
        return unavailable("kubernetes-validate is not installed (scripts/test.sh makes .cache/cluster-venv with it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let render = root().join("scripts/cluster/k8s/render.sh");
    let k8s = d.join("k8s");
    let shards = 2;
    run(Command::new("bash").arg(&render).args(["--run", "rjtest", "--shards", &shards.to_string(), "--model", common::MODEL]).args([
        "--queries",
        "inputs/queries.jsonl",
        "--responses",
        "inputs/responses",
        "--cpus",
        "1",
        "--out",
        k8s.to_str().unwrap(),
    ]));
    let files: Vec<PathBuf> = ["volume", "loader", "grade", "merge"].iter().map(|f| k8s.join(format!("{f}.yaml"))).collect();

    // The API's own schemas, strict (no unknown field): the oldest version with per-index retries
    // on by default, and the newest the validator knows.
    for version in ["1.29.0", "1.37.0"] {
        let o = Command::new(&validate).args(["--strict", "-k", version]).args(&files).output().unwrap();
        assert!(
            o.status.success(),
            "the manifests fail Kubernetes {version}'s schema:\n{}{}",
            text(&o),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The validator fails what is wrong: a misspelt field, a count that is not a number.
    let grade_text = std::fs::read_to_string(&files[2]).unwrap();
    for (what, from, to) in
        [("a misspelt field", "backoffLimitPerIndex", "backofLimitPerIndex"), ("a count as text", "completions: 2", "completions: two")]
    {
        assert!(grade_text.contains(from));
        let bad = d.join("bad.yaml");
        std::fs::write(&bad, grade_text.replace(from, to)).unwrap();
        let o = Command::new(&validate).args(["--strict", "-k", "1.37.0"]).arg(&bad).output().unwrap();
        assert!(!o.status.success(), "the validator passed {what}");
    }
    // render.sh takes only values that are safe in YAML and in the pods' shell command.
    for (flag, value) in
        [("--run", "Bad_Name"), ("--queries", "a b.jsonl"), ("--responses", "../etc"), ("--shards", "0"), ("--memory", "4G; rm")]
    {
        let mut args = vec!["--run", "ok", "--shards", "2", "--model", "m", "--queries", "q", "--responses", "r", "--out"];
        let out = d.join("refused");
        args.push(out.to_str().unwrap());
        let at = args.iter().position(|a| *a == flag).map(|i| i + 1);
        match at {
            Some(i) => args[i] = value,
            None => args.extend([flag, value]),
        }
        let o = Command::new("bash").arg(&render).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "render.sh took {flag} {value:?}");
        assert!(!out.exists(), "render.sh wrote manifests for {flag} {value:?}");
    }

    let (volume, grade, merge) = (manifest(&files[0]), manifest(&files[2]), manifest(&files[3]));
    assert_eq!(grade["spec"]["completionMode"], "Indexed");
    assert_eq!(grade["spec"]["completions"], shards);
    for job in [&grade, &merge] {
        assert_eq!(job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], volume["metadata"]["name"]);
    }

    // The pods' own commands, run as the kubelet would: every index of the Indexed Job, then the
    // merge Job; /data is a folder holding the binary, the model cache and the inputs.
    let data = d.join("data");
    std::fs::create_dir_all(data.join("bin")).unwrap();
    std::fs::create_dir_all(data.join("cache/models")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rocketjudge"), data.join("bin/rocketjudge")).unwrap();
    std::os::unix::fs::symlink(model_path(), data.join(format!("cache/models/{}.gguf", common::MODEL))).unwrap();
    std::fs::create_dir(data.join("inputs")).unwrap();
    let (queries, responses) = inputs(&data.join("inputs"), &THREE_MODELS[..2]);
    let reference = d.join("reference");
    let reference_ranking = unsharded(&queries, &responses, &reference);
    for i in 0..shards {
        run_container(&grade, &data, &[("JOB_COMPLETION_INDEX", i.to_string())]);
    }
    let merged = run_container(&merge, &data, &[]);
    let run_dir = data.join("runs/rjtest");
    assert_eq!(
        jsonl_files(&run_dir.join("judgments")),
        jsonl_files(&reference),
        "the Jobs' merged judgments differ from one unsharded run"
    );
    assert_eq!(ranking(&run_dir.join("ranking.json")), reference_ranking);
    assert!(text(&merged).contains("gpt-4"), "the merge Job's log shows the ranking: {}", text(&merged));
}
