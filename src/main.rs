//! Command line: `serve` (the real job), `demo` (embedded sample store), `check` (config),
//! `doctor` (the store as agents will see it), `config-schema` (the file's JSON Schema),
//! `healthcheck` (the container image's probe of a running bridge).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bcp_bridge::logging;
use bcp_bridge::protocol::Protocol;
use bcp_bridge::startup::server_config::Transport;
use bcp_bridge::startup::warnings::warnings;
use bcp_bridge::startup::{Bridge, BridgeConfig, Built, Overrides, StartError, Startup};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "bcp-bridge",
    version,
    about = "Expose your Shopify or WooCommerce store to AI shopping agents over MCP (BCP/UCP)"
)]
struct Cli {
    /// Log as JSON lines instead of human-readable text.
    #[arg(long, global = true)]
    log_json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bridge for the store described in the configuration file.
    Serve {
        /// TOML configuration file (see config/*.toml).
        #[arg(long, short)]
        config: PathBuf,
        /// Listen on HOST:PORT instead of `server.listen`; port 0 picks a free port.
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Serve BCP names, UCP names, or both; overrides `server.protocol`.
        #[arg(long, value_parser = parse_protocol)]
        protocol: Option<Protocol>,
    },
    /// Run on the embedded sample store, no configuration needed.
    Demo {
        /// Listen on HOST:PORT (default 127.0.0.1:8080); port 0 picks a free port.
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Serve BCP names (default), UCP names (`/.well-known/ucp`), or both.
        #[arg(long, value_parser = parse_protocol)]
        protocol: Option<Protocol>,
    },
    /// Validate a configuration file and report every problem with its key.
    Check {
        #[arg(long, short)]
        config: PathBuf,
    },
    /// Contact the store with the configured credentials and show what agents will see.
    Doctor {
        #[arg(long, short)]
        config: PathBuf,
        /// Also create a one-line cart, show its continue_url, and cancel it.
        #[arg(long)]
        cart: bool,
    },
    /// Print the JSON Schema of the configuration file (editors, CI).
    ConfigSchema,
    /// Exit 0 when the bridge this file configures answers /healthz (the image's HEALTHCHECK).
    Healthcheck {
        #[arg(long, short)]
        config: PathBuf,
        /// Give up after this many seconds.
        #[arg(long, default_value_t = 2)]
        timeout_secs: u64,
    },
}

fn parse_protocol(name: &str) -> Result<Protocol, String> {
    Protocol::parse(name).ok_or_else(|| format!("expected one of {}", Protocol::NAMES.join(", ")))
}

fn out(text: &str) {
    // The banner is the CLI talking to the person who started it; logs go to stderr.
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// Where the start banner goes: stdout for the person at a terminal; with `--log-json` each
/// line is a JSON log line instead, so a collector reading a container's output sees only JSON.
#[derive(Clone, Copy)]
enum Banner {
    Text,
    Log,
}

impl Banner {
    fn line(self, text: &str) {
        match self {
            Self::Text => out(text),
            Self::Log => tracing::info!(target: "bcp_bridge::banner", "{text}"),
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

/// Builds, prints where the bridge is reached, then serves until SIGTERM or Ctrl-C.
async fn run(startup: Startup, demo: bool, banner: Banner) -> Result<(), StartError> {
    let built = startup.build().await?;
    announce(&built, demo, banner);
    built.start(shutdown_signal()).await;
    tracing::info!("stopped");
    Ok(())
}

/// The log lines and the banner of a bridge about to serve.
fn announce(built: &Built, demo: bool, banner: Banner) {
    let (config, bridge, bound) = (built.config(), &built.bridge, built.bound);
    let store = bridge.platform.info();
    tracing::info!(
        listen = %bound,
        platform = store.platform,
        store = %store.name,
        endpoint = %bridge
            .mcp_url
            .as_deref()
            .or(bridge.endpoints.first().and_then(|e| e.rest_url.as_deref()))
            .unwrap_or("-"),
        "bcp-bridge ready"
    );
    let agents = &config.access.allowed_profiles;
    tracing::info!(
        negotiation = config.negotiation.enabled,
        accepted_agents = if agents.is_empty() {
            "any".to_owned()
        } else {
            agents.join(", ")
        },
        default_profile = config.agents.default_profile.as_deref().unwrap_or("-"),
        bearer_tokens = config.access.bearer_token_sha256.len(),
        "agents: negotiation {}",
        if config.negotiation.enabled {
            "on (each agent's profile is fetched and its ucp.version checked)"
        } else {
            "off"
        }
    );
    banner.line(&format!("bcp-bridge listening on {bound}"));
    for (index, endpoint) in bridge.endpoints.iter().enumerate() {
        // The primary endpoint keeps the plain labels scripts read; a second one is tagged.
        let tag = if index == 0 {
            String::new()
        } else {
            format!(" ({})", endpoint.service)
        };
        if let Some(mcp_url) = &endpoint.mcp_url {
            banner.line(&format!("MCP endpoint{tag}: {mcp_url}"));
        }
        if let Some(rest_url) = &endpoint.rest_url {
            banner.line(&format!("REST base{tag}:    {rest_url}"));
        }
        banner.line(&format!("Discovery{tag}:    {}", endpoint.profile_url));
    }
    if config.server.status_page.enabled {
        banner.line(&format!("Merchant page: {}/", bridge.base_url));
    }
    if demo {
        banner.line("Try it:");
        banner.line(&try_it(bridge));
    }
}

/// The demo's example request, on a transport that is mounted.
fn try_it(bridge: &Bridge) -> String {
    if let Some(mcp_url) = &bridge.mcp_url {
        return format!(
            "  curl -s {mcp_url} -H 'Content-Type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"search_catalog\",\"arguments\":{{\"meta\":{{\"ucp-agent\":{{\"profile\":\"https://agent.example/profile.json\"}}}},\"catalog\":{{\"query\":\"blue running shoes\"}}}}}}}}'"
        );
    }
    let rest_url = bridge
        .endpoints
        .first()
        .and_then(|endpoint| endpoint.rest_url.as_deref())
        .unwrap_or_default();
    format!(
        "  curl -s {rest_url}/catalog/search -H 'Content-Type: application/json' -H 'Request-Id: try-1' -H 'UCP-Agent: profile=\"https://agent.example/profile.json\"' -d '{{\"query\":\"blue running shoes\"}}'"
    )
}

/// Measured against glibc malloc and jemalloc under load (BENCHMARKS.md, "allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_json);
    let demo = matches!(cli.command, Command::Demo { .. });
    let banner = if cli.log_json {
        Banner::Log
    } else {
        Banner::Text
    };
    let startup = match cli.command {
        Command::Check { config } => match BridgeConfig::from_file(&config) {
            Ok(parsed) => {
                let server = &parsed.server;
                // The primary endpoint: the UCP one when only UCP is served; the REST base
                // when no MCP endpoint is mounted.
                let namespaces = server.protocol.namespaces();
                let primary = namespaces.first();
                let (label, path) = match primary {
                    Some(namespace) if !server.serves(Transport::Mcp) => {
                        ("REST base", server.rest_path_for(namespace))
                    }
                    Some(namespace) => ("MCP endpoint", server.mcp_path_for(namespace)),
                    None => ("MCP endpoint", server.mcp_path.as_str()),
                };
                out(&format!(
                    "{}: OK (platform {}, {label} {}{path})",
                    config.display(),
                    parsed.platform_name(),
                    server.base_url(server.listen),
                ));
                // Worth knowing, not wrong: the file is still OK and the exit code stays 0.
                for warning in warnings(&parsed, Some(&config)) {
                    out(&format!("  warning: {warning}"));
                }
                return ExitCode::SUCCESS;
            }
            Err(error) => {
                out(&format!("{}: {error}", config.display()));
                return ExitCode::from(2);
            }
        },
        Command::Doctor { config, cart } => match BridgeConfig::from_file(&config) {
            Ok(parsed) => {
                let report = match runtime() {
                    Ok(runtime) => runtime.block_on(bcp_bridge::doctor::run(&parsed, cart)),
                    Err(error) => {
                        let _ = writeln!(
                            std::io::stderr(),
                            "error: cannot start the async runtime: {error}"
                        );
                        return ExitCode::FAILURE;
                    }
                };
                out(&format!("bcp-bridge doctor: {}", config.display()));
                out(report.render().trim_end());
                return if report.agent_could_shop() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(2)
                };
            }
            Err(error) => {
                out(&format!("{}: {error}", config.display()));
                return ExitCode::from(2);
            }
        },
        Command::Healthcheck {
            config,
            timeout_secs,
        } => return healthcheck(&config, Duration::from_secs(timeout_secs)),
        Command::ConfigSchema => {
            out(&bcp_bridge::startup::config_schema::render());
            return ExitCode::SUCCESS;
        }
        Command::Serve {
            config,
            listen,
            protocol,
        } => Startup::from_file(&config, &Overrides { listen, protocol }),
        Command::Demo { listen, protocol } => Startup::demo(&Overrides { listen, protocol }),
    };
    let started = match runtime() {
        Ok(runtime) => startup.and_then(|startup| runtime.block_on(run(startup, demo, banner))),
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot start the async runtime: {error}"
            );
            return ExitCode::FAILURE;
        }
    };
    match started {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Printed once, where the person who started the bridge reads it; a problem the
            // operator fixes in the configuration exits 2, as `check` does.
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// The image's HEALTHCHECK: 0 when `/healthz` answers on the configured port, 1 otherwise
/// (Docker reads only 0 and 1), with the reason on stderr.
fn healthcheck(config: &std::path::Path, timeout: Duration) -> ExitCode {
    let parsed = match BridgeConfig::from_file(config) {
        Ok(parsed) => parsed,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "{}: {error}", config.display());
            return ExitCode::FAILURE;
        }
    };
    let probed = match runtime() {
        Ok(runtime) => runtime.block_on(bcp_bridge::startup::healthcheck::probe(
            &parsed.server,
            timeout,
        )),
        Err(error) => Err(format!("cannot start the async runtime: {error}")),
    };
    match probed {
        Ok(()) => {
            out("ok");
            ExitCode::SUCCESS
        }
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "unhealthy: {why}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}
