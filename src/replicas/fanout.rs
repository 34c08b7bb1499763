//! Messages every replica hears: Redis pub/sub on one channel. Pub/sub delivers only to
//! those subscribed at that moment, so each (re)subscription first reports a gap: whatever
//! was published while this replica was not listening is lost, and the listener must act as
//! if anything could have changed.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use super::link::{Link, RedisDown};

/// Between two attempts to subscribe while Redis is away.
const RESUBSCRIBE: Duration = Duration::from_millis(250);

pub async fn publish(link: &Link, channel: &str, payload: &str) -> Result<(), RedisDown> {
    let mut publish = redis::cmd("PUBLISH");
    publish.arg(channel).arg(payload);
    let _listeners: i64 = link.query(&publish).await?;
    Ok(())
}

/// Listens on `channel` for as long as the runtime runs: `message` gets each payload, `gap`
/// runs on every (re)subscription.
pub fn listen(
    link: Arc<Link>,
    channel: &'static str,
    message: impl Fn(String) + Send + 'static,
    gap: impl Fn() + Send + 'static,
) {
    tokio::spawn(async move {
        loop {
            let Ok(pubsub) = link.subscribe(channel).await else {
                tokio::time::sleep(RESUBSCRIBE).await;
                continue;
            };
            gap();
            let mut stream = pubsub.into_on_message();
            while let Some(received) = stream.next().await {
                match received.get_payload::<String>() {
                    Ok(payload) => message(payload),
                    Err(_) => tracing::warn!(channel, "unreadable pub/sub message ignored"),
                }
            }
            tracing::warn!(channel, "pub/sub connection lost: resubscribing");
            tokio::time::sleep(RESUBSCRIBE).await;
        }
    });
}
