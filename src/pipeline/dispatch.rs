//! The brain step: arguments decoded into the tool's request type and handed to the brain.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::protocol_error::ProtocolError;
use crate::brain::Brain;
use crate::protocol::answer::Answer;
use crate::protocol::request::{
    CartIdArgs, CatalogArgs, CheckoutIdArgs, CreateCartArgs, CreateCheckoutArgs, GetProductIn,
    LookupIn, OrderIdArgs, SearchIn, UpdateCartArgs, UpdateCheckoutArgs,
};
use crate::protocol::{Release, ToolName};

fn decode<T: DeserializeOwned>(arguments: Value) -> Result<T, ProtocolError> {
    // Arguments already passed the JSON Schema; what serde can still refuse (e.g. a number
    // past u32) is reported the same way.
    serde_path_to_error::deserialize(arguments).map_err(|error| {
        let path = format!("$.{}", error.path());
        ProtocolError::invalid_at(&path, error.inner().to_string())
    })
}

/// Cart payloads of get/update/cancel must not carry the id: it goes in `arguments.id`.
fn reject_cart_id(arguments: &Value) -> Result<(), ProtocolError> {
    reject_payload_id(arguments, "cart")
}

/// The same for a Checkout payload: the session is named by `arguments.id` alone.
fn reject_payload_id(arguments: &Value, payload: &str) -> Result<(), ProtocolError> {
    if arguments
        .get(payload)
        .and_then(Value::as_object)
        .is_some_and(|object| object.contains_key("id"))
    {
        return Err(ProtocolError::invalid_at(
            &format!("$.{payload}.id"),
            format!(
                "must not be present: the {payload} is identified by the top-level `id` argument"
            ),
        ));
    }
    Ok(())
}

fn reject_repeated_selections(request: &GetProductIn) -> Result<(), ProtocolError> {
    for (index, choice) in request.selected.iter().enumerate() {
        if request.selected[..index]
            .iter()
            .any(|earlier| earlier.name.eq_ignore_ascii_case(&choice.name))
        {
            return Err(ProtocolError::invalid_at(
                &format!("$.catalog.selected[{index}].name"),
                format!("option {:?} is selected more than once", choice.name),
            ));
        }
    }
    Ok(())
}

/// `webhook_url` is the agent's order webhook, from the profile negotiation read.
pub async fn run(
    brain: &Brain,
    name: ToolName,
    arguments: Value,
    release: Release,
    webhook_url: Option<&str>,
) -> Result<Answer, ProtocolError> {
    let answer = match name {
        ToolName::SearchCatalog => {
            let args: CatalogArgs<SearchIn> = decode(arguments)?;
            brain.search(args.catalog, release).await?
        }
        ToolName::LookupCatalog => {
            let args: CatalogArgs<LookupIn> = decode(arguments)?;
            brain.lookup(args.catalog, release).await?
        }
        ToolName::GetProduct => {
            let args: CatalogArgs<GetProductIn> = decode(arguments)?;
            reject_repeated_selections(&args.catalog)?;
            brain.get_product(args.catalog, release).await?
        }
        ToolName::CreateCart => {
            let args: CreateCartArgs = decode(arguments)?;
            brain.create_cart(args.cart, release).await?
        }
        ToolName::GetCart => {
            reject_cart_id(&arguments)?;
            let args: CartIdArgs = decode(arguments)?;
            brain.get_cart(&args.id, release).await?
        }
        ToolName::UpdateCart => {
            reject_cart_id(&arguments)?;
            let args: UpdateCartArgs = decode(arguments)?;
            brain.update_cart(&args.id, args.cart, release).await?
        }
        ToolName::CancelCart => {
            reject_cart_id(&arguments)?;
            let args: CartIdArgs = decode(arguments)?;
            brain.cancel_cart(&args.id, release).await?
        }
        ToolName::CreateCheckout => {
            let args: CreateCheckoutArgs = decode(arguments)?;
            brain.create_checkout(args.checkout, release).await?
        }
        ToolName::GetCheckout => {
            let args: CheckoutIdArgs = decode(arguments)?;
            brain.get_checkout(&args.id, release).await?
        }
        ToolName::UpdateCheckout => {
            reject_payload_id(&arguments, "checkout")?;
            let args: UpdateCheckoutArgs = decode(arguments)?;
            brain
                .update_checkout(&args.id, args.checkout, release)
                .await?
        }
        ToolName::CompleteCheckout => {
            reject_payload_id(&arguments, "checkout")?;
            let args: UpdateCheckoutArgs = decode(arguments)?;
            brain
                .complete_checkout(
                    &args.id,
                    args.checkout,
                    args.meta.idempotency_key,
                    release,
                    webhook_url,
                )
                .await?
        }
        ToolName::CancelCheckout => {
            let args: CheckoutIdArgs = decode(arguments)?;
            brain.cancel_checkout(&args.id, release).await?
        }
        ToolName::GetOrder => {
            let args: OrderIdArgs = decode(arguments)?;
            brain.get_order(&args.id, release).await?
        }
    };
    Ok(answer)
}
