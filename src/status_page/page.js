"use strict";
// The merchant page's script: copy buttons, and the playground, which calls the real MCP
// endpoint with fetch(). Store text is untrusted: it only ever becomes textContent or a
// checked https URL, never markup.
(() => {
  const byId = (id) => document.getElementById(id);
  // The page's language: the server writes the words on <body> (data-word-*).
  const word = (key) => document.body.dataset["word" + key[0].toUpperCase() + key.slice(1)] || key;

  for (const button of document.querySelectorAll("button.copy")) {
    button.addEventListener("click", async () => {
      const text = byId(button.dataset.copy).textContent;
      try {
        await navigator.clipboard.writeText(text);
      } catch (_) {
        const range = document.createRange();
        range.selectNodeContents(byId(button.dataset.copy));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        document.execCommand("copy");
      }
      button.textContent = word("copied");
      setTimeout(() => { button.textContent = word("copy"); }, 1500);
    });
  }

  const playground = byId("playground");
  if (!playground || !playground.dataset.mcpPath) return; // REST only: no playground
  const form = byId("search-form");
  const query = byId("q");
  const profile = byId("profile");
  const token = byId("token");
  const cards = byId("cards");
  const raw = byId("raw");
  const status = byId("play-status");
  let nextId = 1;

  const element = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };

  // Amounts are integers in minor units: placed with string arithmetic, never a float.
  const money = (value) => {
    if (!value || !Number.isInteger(value.amount)) return "";
    let digits = 2;
    try {
      digits = new Intl.NumberFormat("en", { style: "currency", currency: value.currency })
        .resolvedOptions().maximumFractionDigits;
    } catch (_) { /* an unknown code keeps two digits */ }
    let text = String(Math.abs(value.amount));
    if (digits > 0) {
      text = text.padStart(digits + 1, "0");
      text = text.slice(0, -digits) + word("decimal") + text.slice(-digits);
    }
    return (value.amount < 0 ? "-" : "") + value.currency + " " + text;
  };

  const priceRange = (range) => {
    if (!range) return "";
    const low = money(range.min);
    const high = money(range.max);
    return low === high ? low : low + " – " + high;
  };

  const image = (media) => {
    const first = (media || []).find((item) => typeof item.url === "string");
    if (!first || !first.url.startsWith("https://")) return null;
    const img = element("img");
    img.alt = first.alt_text || "";
    img.loading = "lazy";
    img.referrerPolicy = "no-referrer";
    img.addEventListener("error", () => img.remove());
    img.src = first.url;
    return img;
  };

  const call = async (tool, args) => {
    const agent = profile.value.trim();
    if (agent) args.meta = { "ucp-agent": { profile: agent } };
    const headers = {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
    };
    if (token && token.value) headers["Authorization"] = "Bearer " + token.value;
    const body = {
      jsonrpc: "2.0",
      id: nextId++,
      method: "tools/call",
      params: { name: tool, arguments: args },
    };
    const response = await fetch(playground.dataset.mcpPath, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      cache: "no-store",
      credentials: "same-origin",
    });
    const text = await response.text();
    let reply;
    try {
      reply = JSON.parse(text);
    } catch (_) {
      reply = { http_status: response.status, body: text };
    }
    raw.textContent = JSON.stringify(reply, null, 2);
    if (reply.error) {
      throw new Error(tool + " refused (" + reply.error.code + "): " + reply.error.message);
    }
    if (!reply.result) throw new Error(tool + ": HTTP " + response.status);
    if (reply.result.isError) throw new Error(tool + " failed: see the raw reply");
    return reply.result.structuredContent || {};
  };

  const messages = (answer) => (answer.messages || [])
    .map((message) => message.type + ": " + message.content)
    .join(" · ");

  const card = (product) => {
    const node = element("article", "product-card");
    node.dataset.productId = product.id;
    const picture = image(product.media);
    if (picture) node.append(picture);
    node.append(element("h3", "", product.title || product.id));
    node.append(element("p", "price", priceRange(product.price_range)));
    node.append(element("code", "", product.id));
    const details = element("button", "details", "get_product");
    details.type = "button";
    details.addEventListener("click", () => showProduct(product.id));
    node.append(details);
    return node;
  };

  const detail = (product) => {
    const node = element("article", "product-card detail");
    node.dataset.productId = product.id;
    const picture = image(product.media);
    if (picture) node.append(picture);
    node.append(element("h3", "", product.title || product.id));
    node.append(element("p", "price", priceRange(product.price_range)));
    if (product.description && product.description.plain) {
      node.append(element("p", "", product.description.plain));
    }
    const list = element("ul", "variants");
    for (const variant of product.variants || []) {
      const available = variant.availability && variant.availability.available;
      list.append(element("li", "",
        variant.title + " · " + money(variant.price) + " · " +
        word(available ? "available" : "unavailable") + " · " + variant.id));
    }
    node.append(list);
    return node;
  };

  const run = async (work) => {
    status.textContent = word("calling");
    cards.dataset.state = "busy";
    try {
      await work();
      cards.dataset.state = "done";
    } catch (error) {
      status.textContent = error.message;
      cards.dataset.state = "error";
    }
  };

  const search = () => run(async () => {
    const catalog = { pagination: { limit: 12 } };
    if (query.value.trim()) catalog.query = query.value.trim();
    const answer = await call("search_catalog", { catalog });
    const products = answer.products || [];
    cards.replaceChildren(...products.map(card));
    const total = answer.pagination && answer.pagination.total_count;
    status.textContent = products.length + " " + word("products") +
      (Number.isInteger(total) ? " " + word("of") + " " + total : "") +
      (messages(answer) ? " · " + messages(answer) : "");
  });

  const showProduct = (id) => run(async () => {
    const answer = await call("get_product", { catalog: { id } });
    if (!answer.product) throw new Error("get_product returned no product");
    cards.replaceChildren(detail(answer.product));
    status.textContent = "get_product " + id + (messages(answer) ? " · " + messages(answer) : "");
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });

  // A link such as /?q=shoes runs that search at once.
  const asked = new URLSearchParams(location.search).get("q");
  if (asked !== null) {
    query.value = asked;
    search();
  }
})();
