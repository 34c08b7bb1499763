//! The built `bcp-bridge` binary as a child process: started with its stdout read line by
//! line, killed when the test drops it.

use std::io::{BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_bcp-bridge");

pub struct Running {
    pub child: Child,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Every stdout line read so far.
    pub banner: Vec<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Starts the binary with `args`; stderr is discarded.
    pub fn start(args: &[&str]) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdout,
            banner: Vec::new(),
        }
    }

    /// `serve --config <config> --listen 127.0.0.1:0`: the bridge on a free loopback port.
    pub fn serve(config: &std::path::Path) -> Self {
        Self::start(&[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
    }

    /// The first stdout line `matches` accepts, among those read already or, failing that,
    /// the ones still to come; panics if stdout ends first.
    pub fn wait_for(&mut self, matches: impl Fn(&str) -> bool) -> String {
        if let Some(line) = self.banner.iter().find(|line| matches(line)) {
            return line.clone();
        }
        for line in self.stdout.by_ref() {
            let line = line.unwrap();
            self.banner.push(line.clone());
            if matches(&line) {
                return line;
            }
        }
        panic!("stdout ended without the line: {:?}", self.banner);
    }

    /// How many sockets the process holds open (its listeners and the connections it
    /// accepted): a connection it has taken shows here, one still in the backlog does not.
    pub fn open_sockets(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count()
    }

    /// The URL of the `MCP endpoint: ` banner line.
    pub fn endpoint(&mut self) -> String {
        let line = self.wait_for(|line| line.starts_with("MCP endpoint: "));
        line.trim_start_matches("MCP endpoint: ").trim().to_owned()
    }
}

impl Running {
    /// Starts the binary with `args`, its stderr (the log) appended to the file `log`.
    pub fn start_logging_to(args: &[&str], log: &std::path::Path) -> Self {
        Self::start_logging_with_env(args, log, &[])
    }

    /// `start_logging_to` with extra environment (e.g. `RUST_LOG=debug`).
    pub fn start_logging_with_env(
        args: &[&str],
        log: &std::path::Path,
        env: &[(&str, &str)],
    ) -> Self {
        let file = std::fs::File::create(log).unwrap();
        let mut child = Command::new(BIN)
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdout,
            banner: Vec::new(),
        }
    }
}

/// With `--log-json` the banner is JSON log lines in the log, not stdout: the URL of the
/// `MCP endpoint: ` one, waited for up to 15 s.
pub fn logged_endpoint(log: &std::path::Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let found = text.lines().find_map(|line| {
            let parsed: serde_json::Value = serde_json::from_str(line).ok()?;
            let message = parsed["fields"]["message"].as_str()?;
            Some(message.strip_prefix("MCP endpoint: ")?.trim().to_owned())
        });
        if let Some(endpoint) = found {
            return endpoint;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no `MCP endpoint:` JSON log line:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
