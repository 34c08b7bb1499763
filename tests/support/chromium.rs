//! A real headless Chromium driven over the DevTools protocol. The protocol runs over
//! `--remote-debugging-pipe` (NUL-terminated JSON on the child's descriptors 3 and 4, which a
//! `sh` wrapper maps onto its stdin and stdout), so no websocket client and no debugging port
//! are needed. Chromium is an outside part (tests/support/outside.rs): a test that launches
//! it is `#[ignore = "needs Chromium: …"]` and fails here, naming the install, when no Chromium
//! is on the PATH (`.ci/run` installs Debian's `chromium`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BINARIES: &[&str] = &["chromium", "chromium-browser", "google-chrome"];

pub struct Browser {
    child: Child,
    input: ChildStdin,
    events: Receiver<Value>,
    next_id: u64,
    session: Option<String>,
    profile_dir: PathBuf,
    /// Console messages, log entries and uncaught exceptions seen so far.
    pub console: Vec<String>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Closed politely first, so Chromium reaps its own renderer and utility processes.
        let close = format!(r#"{{"id":{},"method":"Browser.close"}}"#, self.next_id);
        let _ = self.input.write_all(close.as_bytes());
        let _ = self.input.write_all(b"\0");
        let _ = self.input.flush();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile_dir);
    }
}

fn installed() -> Option<&'static str> {
    BINARIES.iter().copied().find(|binary| {
        Command::new(binary)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

impl Browser {
    pub fn launch() -> Self {
        Self::launch_speaking("en-US")
    }

    /// A browser whose user asks for pages in `language` (its `Accept-Language`).
    pub fn launch_speaking(language: &str) -> Self {
        let Some(binary) = installed() else {
            panic!(
                "no Chromium on the PATH ({}): this test needs one; install it \
                 (apt-get install chromium, as .ci/run does) and run \
                 cargo test -- --include-ignored",
                BINARIES.join(", ")
            );
        };
        let profile_dir = std::env::temp_dir().join(format!(
            "bcp-chromium-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        // fd 3 is what Chromium reads commands from, fd 4 where it writes answers.
        let script = format!(
            "exec 3<&0 4>&1 && exec {binary} --headless --no-sandbox --disable-gpu \
             --disable-background-networking --disable-dev-shm-usage --disable-extensions \
             --no-first-run --no-default-browser-check --remote-debugging-pipe \
             --lang={language} --accept-lang={language} \
             --user-data-dir={} about:blank </dev/null >/dev/null 2>&1",
            profile_dir.display()
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = child.stdout.take().unwrap();
        let (sender, events) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(output);
            let mut message = Vec::new();
            while reader
                .read_until(0, &mut message)
                .is_ok_and(|read| read > 0)
            {
                message.pop_if(|byte| *byte == 0);
                if let Ok(value) = serde_json::from_slice::<Value>(&message)
                    && sender.send(value).is_err()
                {
                    return;
                }
                message.clear();
            }
        });
        let mut browser = Self {
            child,
            input,
            events,
            next_id: 1,
            session: None,
            profile_dir,
            console: Vec::new(),
        };
        let target = browser.command("Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_owned();
        let attached = browser.command(
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = Some(attached["sessionId"].as_str().unwrap().to_owned());
        browser.command("Runtime.enable", json!({}));
        browser.command("Log.enable", json!({}));
        browser
    }

    fn note(&mut self, event: &Value) {
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Runtime.consoleAPICalled") => {
                let words: Vec<String> = params["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|arg| arg["value"].to_string())
                    .collect();
                self.console
                    .push(format!("console.{}: {}", params["type"], words.join(" ")));
            }
            Some("Runtime.exceptionThrown") => self
                .console
                .push(format!("exception: {}", params["exceptionDetails"])),
            Some("Log.entryAdded") => self.console.push(format!(
                "log {} {}: {}",
                params["entry"]["level"], params["entry"]["source"], params["entry"]["text"]
            )),
            _ => {}
        }
    }

    /// Sends one command (to the page once attached) and waits for its result.
    pub fn command(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.input.write_all(&bytes).unwrap();
        self.input.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(reply) if reply["id"] == json!(id) => {
                    assert!(reply.get("error").is_none(), "{method} failed: {reply}");
                    return reply["result"].clone();
                }
                Ok(event) => self.note(&event),
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer from chromium"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium exited"),
            }
        }
    }

    /// The value of a JavaScript expression in the page (promises awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.command(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            result.get("exceptionDetails").is_none(),
            "{expression}: {}",
            result["exceptionDetails"]
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy in the page; panics after `timeout`.
    pub fn wait_for(&mut self, expression: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let value = self.eval(expression);
            if !matches!(value, Value::Null | Value::Bool(false))
                && value != json!(0)
                && value != json!("")
            {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {expression}; console: {:?}",
                self.console
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Opens `url` in the page and waits for it to finish loading.
    pub fn open(&mut self, url: &str) {
        let navigated = self.command("Page.navigate", json!({"url": url}));
        assert!(
            navigated.get("errorText").is_none(),
            "cannot open {url}: {navigated}"
        );
        self.wait_for(
            "document.readyState === 'complete' && location.href !== 'about:blank'",
            Duration::from_secs(15),
        );
    }
}
