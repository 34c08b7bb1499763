//! A secret every replica holds the same: the first replica that asks makes it, Redis keeps
//! it, every later ask (another replica, a restart) reads that one back. Anyone who can read
//! this Redis can read every cart and checkout it fences anyway, so it adds no new exposure.

use super::link::{Link, RedisDown};

/// The 32 bytes stored under `name`, made now if no replica made them yet.
pub async fn shared_key(link: &Link, name: &str) -> Result<[u8; 32], RedisDown> {
    let key = format!("bcp:secret:{name}");
    let mut fresh = [0u8; 32];
    aws_lc_rs::rand::fill(&mut fresh).map_err(|_| RedisDown)?;
    // NX: two replicas racing agree on whichever value landed first.
    let _: Option<String> = link
        .query(
            redis::cmd("SET")
                .arg(&key)
                .arg(hex::encode(fresh))
                .arg("NX"),
        )
        .await?;
    let stored: String = link.query(redis::cmd("GET").arg(&key)).await?;
    let mut bytes = [0u8; 32];
    // A value of another shape was not written by a bridge: refuse rather than guess a key.
    hex::decode_to_slice(stored.trim(), &mut bytes).map_err(|_| RedisDown)?;
    Ok(bytes)
}
