//! A throwaway `redis-server` on a loopback port for one test. redis-server is an outside part
//! (tests/support/outside.rs): a test that starts one is
//! `#[ignore = "needs redis-server: cargo test -- --include-ignored with redis-server on the PATH (.ci/run installs it)"]`
//! and fails here, naming the install, when redis-server is not on the PATH.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub port: u16,
    /// Where a persistent server keeps its append-only file (`start_persistent`).
    dir: Option<std::path::PathBuf>,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn installed() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

fn answers(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buffer = [0u8; 64];
    // +PONG, or -NOAUTH when a password is set: either way the server is up. -LOADING (a
    // restarted server reading its append-only file back) is not up yet: commands would fail.
    matches!(stream.read(&mut buffer), Ok(n) if n > 0 && !buffer[..n].starts_with(b"-LOADING"))
}

impl RedisServer {
    /// A server on a free loopback port, `password` required when given.
    pub fn run(password: Option<&str>) -> Self {
        assert!(
            installed(),
            "redis-server is not on the PATH: this test needs it; install it \
             (apt-get install redis-server, as .ci/run does) and run \
             cargo test -- --include-ignored"
        );
        for _ in 0..5 {
            let port = free_port();
            let mut command = Command::new("redis-server");
            command
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Some(password) = password {
                command.args(["--requirepass", password]);
            }
            let mut child = command.spawn().expect("redis-server starts");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if answers(port) {
                    return Self {
                        child,
                        port,
                        dir: None,
                    };
                }
                if child.try_wait().ok().flatten().is_some() {
                    break; // the port was taken meanwhile: try another
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("redis-server did not start");
    }

    pub fn url(&self, password: Option<&str>) -> String {
        match password {
            Some(password) => format!("redis://:{password}@127.0.0.1:{}/", self.port),
            None => format!("redis://127.0.0.1:{}/", self.port),
        }
    }

    /// A server that keeps its data across `restart` (an append-only file synced on every
    /// write), as a production Redis would; no password.
    pub fn run_persistent() -> Self {
        let mut server = Self::run(None);
        let dir = std::env::temp_dir().join(format!("bcp-redis-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        server.dir = Some(dir);
        server.restart();
        server
    }

    /// Stops the server (SIGKILL) and starts it again on the same port; a persistent one
    /// comes back with its data.
    pub fn restart(&mut self) {
        self.stop();
        let mut command = Command::new("redis-server");
        command.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"]);
        match &self.dir {
            Some(dir) => command.args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--dir",
                dir.to_str().unwrap(),
            ]),
            None => command.args(["--save", "", "--appendonly", "no"]),
        };
        self.child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !answers(self.port) {
            assert!(Instant::now() < deadline, "redis-server did not restart");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server now (the test then sees an unreachable store).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
