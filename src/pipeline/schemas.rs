//! Input and output JSON Schemas of the tools, built once at start-up. They are inlined (no
//! `$ref`) and use only standard keywords so every MCP client can read them; the input
//! schemas are also what arguments are validated against, with the configured limits.

use serde_json::{Value, json};

use crate::brain::LimitsConfig;

const MAX_ID_LEN: u32 = 512;

fn meta(require_idempotency_key: bool) -> Value {
    let mut required = vec!["ucp-agent"];
    if require_idempotency_key {
        required.push("idempotency-key");
    }
    json!({
        "type": "object",
        "description": "Protocol metadata. `ucp-agent.profile` is the URL of the calling platform's profile.",
        "required": required,
        "properties": {
            "ucp-agent": {
                "type": "object",
                "required": ["profile"],
                "properties": {
                    "profile": {"type": "string", "minLength": 1, "maxLength": 2048, "description": "URL of the agent platform's UCP/BCP profile."}
                }
            },
            "idempotency-key": {"type": "string", "minLength": 1, "maxLength": 255, "description": "Retry-safety key (a UUID is recommended)."}
        }
    })
}

fn context() -> Value {
    json!({
        "type": "object",
        "description": "Provisional buyer signals for relevance and localisation.",
        "properties": {
            "address_country": {"type": "string", "maxLength": 64, "description": "ISO 3166-1 alpha-2 country, e.g. BR."},
            "address_region": {"type": "string", "maxLength": 128},
            "postal_code": {"type": "string", "maxLength": 32},
            "intent": {"type": "string", "maxLength": 2000},
            "language": {"type": "string", "maxLength": 35, "description": "BCP 47 tag, e.g. pt-BR."},
            "currency": {"type": "string", "pattern": "^[A-Za-z]{3}$", "description": "ISO 4217 code; also the denomination of price filters."},
            "eligibility": {"type": "array", "items": {"type": "string"}},
            // UCP 2026-08-25 members: unknown values must be ignored without error (CAT-046),
            // so they are typed only loosely, and the store does not use them.
            "location": {"description": "Business location id hint (UCP 2026-08-25); accepted, not used."},
            "payment": {"description": "Preferred payment handlers (UCP 2026-08-25); accepted, not used."}
        }
    })
}

fn filters() -> Value {
    json!({
        "type": "object",
        "description": "All filters combine with AND.",
        "properties": {
            "categories": {
                "type": "array",
                "maxItems": 50,
                "items": {"type": "string", "maxLength": 256},
                "description": "OR-match on categories[].value; a merchant path also matches its sub-categories."
            },
            "price": {
                "type": "object",
                "properties": {
                    "min": {"type": "integer", "minimum": 0, "description": "Minor units (cents)."},
                    "max": {"type": "integer", "minimum": 0, "description": "Minor units (cents)."}
                }
            }
        }
    })
}

fn catalog_common(properties: &mut serde_json::Map<String, Value>) {
    properties.insert("filters".into(), filters());
    properties.insert("context".into(), context());
    properties.insert("signals".into(), json!({"type": "object"}));
    properties.insert("attribution".into(), json!({"type": "object"}));
}

fn tool_input(payload_key: &str, payload: Value, require_idempotency_key: bool) -> Value {
    json!({
        "type": "object",
        "required": ["meta", payload_key],
        "properties": {
            "meta": meta(require_idempotency_key),
            payload_key: payload
        }
    })
}

pub fn search_input(limits: &LimitsConfig) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "query".into(),
        json!({"type": "string", "maxLength": 1000, "description": "Free-text search."}),
    );
    catalog_common(&mut properties);
    properties.insert(
        "pagination".into(),
        json!({
            "type": "object",
            "properties": {
                "cursor": {"type": "string", "maxLength": 4096, "description": "Opaque cursor from the previous page."},
                "limit": {"type": "integer", "minimum": 1, "description": format!("Page size, default {}; larger values are clamped to {}.", limits.default_page_size, limits.max_page_size)}
            }
        }),
    );
    tool_input(
        "catalog",
        json!({"type": "object", "description": "Give a query, filters, or both.", "properties": properties}),
        false,
    )
}

pub fn lookup_input(limits: &LimitsConfig) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "ids".into(),
        json!({
            "type": "array",
            "minItems": 1,
            "maxItems": limits.max_lookup_batch,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN},
            "description": "Product ids, variant ids, SKUs or handles."
        }),
    );
    catalog_common(&mut properties);
    tool_input(
        "catalog",
        json!({"type": "object", "required": ["ids"], "properties": properties}),
        false,
    )
}

pub fn get_product_input() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "id".into(),
        json!({"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN, "description": "Product or variant id."}),
    );
    properties.insert(
        "selected".into(),
        json!({
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["name", "label"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 256},
                    "label": {"type": "string", "maxLength": 256},
                    "id": {"type": "string", "maxLength": 256}
                }
            },
            "description": "Option selections, each option name at most once."
        }),
    );
    properties.insert(
        "preferences".into(),
        json!({
            "type": "array",
            "maxItems": 20,
            "items": {"type": "string", "maxLength": 256},
            "description": "Option names in relaxation priority: when no variant matches every selection, the last ones are dropped first."
        }),
    );
    catalog_common(&mut properties);
    tool_input(
        "catalog",
        json!({"type": "object", "required": ["id"], "properties": properties}),
        false,
    )
}

fn cart_payload(limits: &LimitsConfig, min_lines: u32) -> Value {
    json!({
        "type": "object",
        "required": ["line_items"],
        "properties": {
            "line_items": {
                "type": "array",
                "minItems": min_lines,
                "maxItems": limits.max_cart_lines,
                "items": {
                    "type": "object",
                    "required": ["item", "quantity"],
                    "properties": {
                        "item": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {
                                "id": {"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN, "description": "Variant id (or SKU)."},
                                "quantity_unit": {
                                    "type": "object",
                                    "required": ["unit"],
                                    "description": "Optional sale-basis assertion (UCP 2026-08-25). This store sells by the piece (unit C62, scale 0); any other unit is refused for that line.",
                                    "properties": {
                                        "unit": {"type": "string", "minLength": 1, "maxLength": 64},
                                        "scale": {"type": "integer", "minimum": 0, "maximum": 15},
                                        "display_text": {"type": "string", "maxLength": 256},
                                        "increment": {"type": "integer", "minimum": 1}
                                    }
                                }
                            }
                        },
                        "quantity": {"type": "integer", "minimum": 1, "maximum": limits.max_line_quantity}
                    }
                },
                "description": "The complete list of lines (full replacement on update)."
            },
            "context": context(),
            "buyer": {"type": "object"},
            "signals": {"type": "object"},
            "attribution": {"type": "object"}
        }
    })
}

fn cart_id() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_ID_LEN, "description": "The cart id returned by create_cart."})
}

pub fn create_cart_input(limits: &LimitsConfig) -> Value {
    tool_input("cart", cart_payload(limits, 1), false)
}

pub fn update_cart_input(limits: &LimitsConfig) -> Value {
    json!({
        "type": "object",
        "required": ["meta", "id", "cart"],
        "properties": {
            "meta": meta(false),
            "id": cart_id(),
            "cart": cart_payload(limits, 0)
        }
    })
}

pub fn cart_id_input(require_idempotency_key: bool) -> Value {
    json!({
        "type": "object",
        "required": ["meta", "id"],
        "properties": {
            "meta": meta(require_idempotency_key),
            "id": cart_id()
        }
    })
}

// ---- outputs -------------------------------------------------------------------------------

fn money() -> Value {
    json!({
        "type": "object",
        "required": ["amount", "currency"],
        "properties": {
            "amount": {"type": "integer", "description": "ISO 4217 minor units."},
            "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}
        }
    })
}

fn ucp_envelope() -> Value {
    json!({
        "type": "object",
        "required": ["version"],
        "properties": {
            "version": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
            "status": {"type": "string", "enum": ["success", "error"]},
            "capabilities": {"type": "object"}
        }
    })
}

fn messages() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["type", "content"],
            "properties": {
                "type": {"type": "string", "enum": ["error", "warning", "info"]},
                "code": {"type": "string"},
                "content": {"type": "string"},
                "severity": {"type": "string", "enum": ["recoverable", "requires_buyer_input", "requires_buyer_review", "unrecoverable"]},
                "path": {"type": "string"}
            }
        }
    })
}

fn selected_options() -> Value {
    json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["name", "label"],
            "properties": {"name": {"type": "string"}, "label": {"type": "string"}}
        }
    })
}

fn variant() -> Value {
    json!({
        "type": "object",
        "required": ["id", "title", "description", "price"],
        "properties": {
            "id": {"type": "string"},
            "sku": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "object"},
            "url": {"type": "string"},
            "price": money(),
            "list_price": money(),
            "availability": {
                "type": "object",
                "properties": {"available": {"type": "boolean"}, "status": {"type": "string"}}
            },
            "options": selected_options(),
            "media": {"type": "array", "items": {"type": "object"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "seller": {"type": "object"},
            "inputs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string"}, "match": {"type": "string"}}
                }
            }
        }
    })
}

fn product() -> Value {
    json!({
        "type": "object",
        "required": ["id", "title", "description", "price_range", "variants"],
        "properties": {
            "id": {"type": "string"},
            "handle": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "object"},
            "url": {"type": "string"},
            "categories": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["value"],
                    "properties": {"value": {"type": "string"}, "taxonomy": {"type": "string"}}
                }
            },
            "price_range": {
                "type": "object",
                "required": ["min", "max"],
                "properties": {"min": money(), "max": money()}
            },
            "media": {"type": "array", "items": {"type": "object"}},
            "options": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "values"],
                    "properties": {
                        "name": {"type": "string"},
                        "values": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["label"],
                                "properties": {
                                    "label": {"type": "string"},
                                    "available": {"type": "boolean"},
                                    "exists": {"type": "boolean"}
                                }
                            }
                        }
                    }
                }
            },
            "selected": selected_options(),
            "variants": {"type": "array", "items": variant()},
            "rating": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "metadata": {"type": "object"}
        }
    })
}

/// Every tool answers either its resource or an error response (`ucp.status: "error"` with
/// messages), so only `ucp` is required at the top.
fn output(properties: Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "required": ["ucp"],
        "properties": {
            "ucp": ucp_envelope(),
            "messages": messages(),
            "continue_url": {"type": "string"}
        }
    });
    if let (Some(target), Value::Object(extra)) = (
        schema.get_mut("properties").and_then(Value::as_object_mut),
        properties,
    ) {
        target.extend(extra);
    }
    schema
}

pub fn search_output() -> Value {
    output(json!({
        "products": {"type": "array", "items": product()},
        "pagination": {
            "type": "object",
            "required": ["has_next_page"],
            "properties": {
                "cursor": {"type": "string"},
                "has_next_page": {"type": "boolean"},
                "total_count": {"type": "integer", "minimum": 0}
            }
        }
    }))
}

pub fn lookup_output() -> Value {
    output(json!({"products": {"type": "array", "items": product()}}))
}

pub fn get_product_output() -> Value {
    output(json!({"product": product()}))
}

pub fn cart_output() -> Value {
    let total = json!({
        "type": "object",
        "required": ["type", "amount"],
        "properties": {"type": {"type": "string"}, "amount": {"type": "integer"}, "display_text": {"type": "string"}}
    });
    output(json!({
        "id": {"type": "string"},
        "line_items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "item", "quantity", "totals"],
                "properties": {
                    "id": {"type": "string"},
                    "item": {
                        "type": "object",
                        "required": ["id", "title", "price"],
                        "properties": {
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "price": {"type": "integer"},
                            "image_url": {"type": "string"}
                        }
                    },
                    "quantity": {"type": "integer", "minimum": 1},
                    "totals": {"type": "array", "items": total.clone()}
                }
            }
        },
        "currency": {"type": "string"},
        "totals": {"type": "array", "items": total},
        "expires_at": {"type": "string"}
    }))
}
