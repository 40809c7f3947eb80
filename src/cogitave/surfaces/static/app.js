/* Cogitave Query: the search page. Plain JS, no build step, no dependencies.
 *
 * Every piece of server data reaches the DOM through textContent or attributes set on
 * elements built here (el()); nothing is ever parsed as HTML.
 */
"use strict";

const EDGE_LABELS = [
  "partOf", "dependsOn", "xref", "appliesTo", "forRole",
  "teachesSkill", "supersededBy", "implementedBy", "derivedFrom",
];
const DEBOUNCE_MS = 200;
const KEY_STORE = "cogitave.apiKey";
const GRAPH_EXAMPLES = [
  ["MATCH (s:section)-[:partOf]->(p:page) RETURN s.uid, s.title, p.uid LIMIT 10", "{}"],
  ["MATCH (a)-[:dependsOn*1..3]->(b) RETURN a.uid, b.uid LIMIT 20", "{}"],
  ["MATCH (n {uid: $uid}) RETURN n.uid, n.kind, n.title", '{"uid": "index"}'],
  ["MATCH (c:code_sample)-[:partOf*1..2]->(p:page) RETURN p.uid, c.uid LIMIT 20", "{}"],
  ["MATCH (a)-[*]->(b) RETURN a", "{}"],
  ["CREATE (n:page {uid: 'x'}) RETURN n", "{}"],
];
const ROUTE_REASONS = {
  idf: "lowest idf of its homes, semantic first",
  explicit: "written dim:term",
  guarded: "DF guard: over 2/3 of the points in every home",
  zero_hit: "no hits anywhere, even after rewrites",
  function_word: "function word: never routes, still in the anchors",
};

const state = {
  key: sessionStorage.getItem(KEY_STORE) || "",
  seq: 0,
  controller: null,
  timer: 0,
  last: null, // the last rendered search response
  highlight: { words: new Set(), stems: [] },
  history: [], // uids of nodes opened before the current one
  current: null,
  nodeSeq: 0,
  root: null, // the root the server answered from at the last look
  rootChange: null, // { from, at } when the server moved to another root
  libs: [], // the libraries held (GET /libraries), each with the version chosen here
  libWarnings: [],
  lastBody: null, // the body of the last search (the agent answer asks the same)
};

const $ = (id) => document.getElementById(id);

/* ---- DOM helpers ------------------------------------------------------------------------ */

/** Build an element. attrs: class, text, on* handlers, dataset (object), others as attributes.
 * Children: nodes, strings (text nodes), arrays, null/undefined/false (skipped). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = String(v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function clear(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

function fmt(n, digits = 2) {
  if (typeof n !== "number" || !Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

function badge(text, cls = "") {
  return el("span", { class: `badge ${cls}`.trim(), text });
}

function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [k, v] of pairs) {
    if (v === undefined) continue;
    dl.append(el("dt", { text: k }), el("dd", {}, v === null ? "—" : v));
  }
  return dl;
}

function table(head, rows, cls = "") {
  return el(
    "table",
    { class: `grid ${cls}`.trim() },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))),
  );
}

function section(title, open, ...body) {
  return el("details", { class: "block", open }, el("summary", {}, title), ...body);
}

/** A horizontal bar: share in [0, 1]. Visual only; the caller labels it. */
function bar(share, cls = "") {
  const fill = el("span", { class: `fill ${cls}`.trim() });
  fill.style.width = `${Math.max(2, Math.min(100, share * 100)).toFixed(1)}%`;
  return el("span", { class: "bar", "aria-hidden": "true" }, fill);
}

/** Text with the query's words wrapped in <mark>, as text nodes only. */
function highlighted(text) {
  const { words, stems } = state.highlight;
  const frag = document.createDocumentFragment();
  if (!text) return frag;
  const re = /[\p{L}\p{N}_]+/gu;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const w = m[0].toLowerCase();
    if (words.has(w) || stems.some((s) => w.startsWith(s))) {
      if (m.index > last) frag.append(text.slice(last, m.index));
      frag.append(el("mark", { text: m[0] }));
      last = m.index + m[0].length;
    }
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

/* ---- Markdown, safely: every piece becomes a DOM node built here; raw HTML in a document
 * is shown as text, never parsed. Links keep only http(s), mailto and relative targets. --- */

const MD_FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;

function markdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text || "").replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, "").split(/\r?\n/);
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(MD_FENCE);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !(lines[i].trim().startsWith(fence[1]) && lines[i].trim().replace(/[`~]/g, "") === "")) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1;
      frag.append(codeBlock(body.join("\n"), fence[2]));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      const level = Math.min(6, heading[1].length + 3); // h4..h6: below the pane's own headings
      frag.append(el(`h${level}`, { class: "md-h" }, inline(heading[2])));
      i += 1;
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+[.)])\s+/;
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul", { class: "md-list" });
      while (i < lines.length && item.test(lines[i])) {
        list.append(el("li", {}, inline(lines[i].replace(item, ""))));
        i += 1;
      }
      frag.append(list);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !MD_FENCE.test(lines[i]) && !/^#{1,6}\s/.test(lines[i]) && !item.test(lines[i])) {
      para.push(lines[i]);
      i += 1;
    }
    if (para.every((l) => l.startsWith(">"))) {
      frag.append(el("blockquote", {}, inline(para.map((l) => l.replace(/^>\s?/, "")).join(" "))));
    } else {
      frag.append(el("p", {}, inline(para.join(" "))));
    }
  }
  return frag;
}

/** A fenced code block with a button that copies its text. */
function codeBlock(text, lang) {
  const code = el("code", lang ? { class: `language-${lang}` } : {}, text);
  const pre = el("pre", { class: "md-code", tabindex: "0", dataset: { lang: lang || "" } }, code);
  const button = el("button", {
    type: "button",
    class: "copy small",
    text: "copy",
    "aria-label": lang ? `copy the ${lang} code` : "copy the code",
    onclick: () => copyText(text, pre, button),
  });
  return el("div", { class: "code-box" }, button, pre);
}

/** Copy ``text`` to the clipboard; where the clipboard is refused, select the code instead
 * so that Ctrl+C copies it. The button says which happened. */
async function copyText(text, pre, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "copied";
    button.dataset.copied = "clipboard";
  } catch {
    const range = document.createRange();
    range.selectNodeContents(pre);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = "selected: Ctrl+C";
    button.dataset.copied = "selected";
  }
}

/**
 * A link target the page may use, read as a browser's URL parser reads it: C0 controls and
 * spaces at either end are dropped and ASCII tabs and newlines anywhere are removed before
 * the scheme is looked at, so "\x01javascript:" or "java\tscript:" is javascript: too.
 * http, https, mailto and relative links pass; any other scheme gives null.
 */
function safeHref(href) {
  // eslint-disable-next-line no-control-regex
  const h = href.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "").replace(/[\t\n\r]/g, "");
  if (/^(https?:|mailto:)/i.test(h)) return h;
  if (/^[a-z][a-z0-9+.-]*:/i.test(h)) return null; // javascript:, data:, ...
  return h;
}

/** Inline Markdown: `code`, **strong**, *em*, [text](href), ![alt](src) as a link. */
function inline(text) {
  const frag = document.createDocumentFragment();
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(highlighted(text.slice(last, m.index)));
    if (m[1] !== undefined) frag.append(el("code", {}, m[1]));
    else if (m[2] !== undefined) frag.append(el("strong", {}, highlighted(m[2])));
    else if (m[3] !== undefined) frag.append(el("em", {}, highlighted(m[3])));
    else {
      const href = safeHref(m[5]);
      const label = m[4] || m[5];
      frag.append(href ? el("a", { href, rel: "noopener noreferrer", target: "_blank" }, label) : label);
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(highlighted(text.slice(last)));
  return frag;
}

function setHighlight(query, plan) {
  const words = new Set();
  const stems = [];
  for (const m of query.matchAll(/[\p{L}\p{N}_]+/gu)) words.add(m[0].toLowerCase());
  if (plan) {
    for (const t of plan.rewrites?.tokens || []) words.add(String(t).toLowerCase());
    for (const r of plan.routes || []) {
      if (r.stem && r.stem.length >= 4 && r.reason !== "function_word") stems.push(r.stem);
    }
    for (const neg of plan.excluded || []) words.delete(String(neg).toLowerCase());
  }
  state.highlight = { words, stems };
}

/** /nodes/{uid}: a uid may hold '/', so each segment is escaped ('#' becomes %23). */
function nodePath(uid) {
  return "/nodes/" + uid.split("/").map(encodeURIComponent).join("/");
}

function shortRoot(root) {
  return typeof root === "string" ? root.slice(0, 12) : "—";
}

/* ---- the API ---------------------------------------------------------------------------- */

class ApiError extends Error {
  constructor(status, error) {
    super(error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = error?.code || "http";
    this.details = error?.details;
  }
}

async function api(method, path, body, signal) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  let resp;
  try {
    resp = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, { code: "network", message: `the server did not answer (${e.message})` });
  }
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  if (!resp.ok) {
    if (resp.status === 401) askForKey();
    throw new ApiError(resp.status, data?.error);
  }
  return data;
}

function errorBox(err) {
  return el(
    "div",
    { class: "error", role: "alert" },
    el(
      "p",
      { class: "error-head" },
      "error ",
      el("code", { class: "error-code", text: err.code || "error" }),
      err.status ? ` · HTTP ${err.status}` : "",
    ),
    el("p", { class: "error-msg", text: err.message }),
    err.details ? el("pre", { class: "details", text: JSON.stringify(err.details) }) : null,
  );
}

function askForKey() {
  const box = $("key-box");
  if (!box.open) box.open = true;
  $("root-line").textContent = "this server needs an API key: enter it under “API key”";
}

/* ---- libraries: what the collection holds, the version chosen per library ---------------- */

/** How a version was chosen, in words (as the server's Markdown says it). */
function choiceText(match, wanted) {
  if (!match || match === "default") return "newest held";
  if (match === "exact" || !wanted) return match;
  return `${match} to ${wanted}`;
}

/** "3 h ago" from an ISO time; "" when there is none. */
function age(iso) {
  const t = Date.parse(iso || "");
  if (!Number.isFinite(t)) return "";
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 90) return "just now";
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function when(iso) {
  if (!iso) return "—";
  const a = age(iso);
  return `${iso.slice(0, 19).replace("T", " ")}${a ? ` (${a})` : ""}`;
}

async function loadLibraries() {
  let data;
  try {
    data = await api("GET", "/libraries");
  } catch (e) {
    if (e.status !== 401) clear($("libs-warnings"), errorBox(e));
    return;
  }
  state.libWarnings = data.warnings || [];
  state.libs = (data.libraries || []).map((lib) => {
    const versions = lib.versions || [];
    const def = versions.find((v) => v.default) || versions.find((v) => v.version_match) || versions[0];
    const defaultOn = versions.some((v) => v.default);
    return { ...lib, defaultVersion: def?.version, version: def?.version, defaultOn, on: defaultOn };
  });
  renderLibraries();
  document.body.dataset.libraries = String(state.libs.length);
}

/** The REST ``library`` argument: null while every library reads its default version (the
 * server's choice, pins included); else the libraries ticked, each by key when at its default
 * version, as key@version when another was picked. */
function libraryArg() {
  const libs = state.libs;
  if (!libs.length) return null;
  if (libs.every((l) => l.on === l.defaultOn && (!l.on || l.version === l.defaultVersion))) return null;
  return libs
    .filter((l) => l.on)
    .map((l) => (l.defaultOn && l.version === l.defaultVersion ? l.key : `${l.key}@${l.version}`));
}

function renderLibraries() {
  const pane = $("libs-pane");
  const libs = state.libs;
  pane.hidden = libs.length === 0;
  clear(
    $("libs-warnings"),
    state.libWarnings.map((w) => el("p", { class: "warn-line", role: "note" }, badge("project", "warn"), " ", w)),
  );
  const list = clear($("libs"));
  const choosing = libs.length > 1;
  for (const lib of libs) list.append(libraryRow(lib, choosing));
}

function libraryRow(lib, choosing) {
  const id = `lib-${lib.key.replace(/[^\w-]/g, "_")}`;
  const versions = lib.versions || [];
  const prov = el("div", { class: "lib-prov" });
  const pin = el("div", { class: "lib-pin" });
  const show = () => {
    const v = versions.find((x) => x.version === lib.version) || versions[0] || {};
    clear(
      prov,
      kv([
        ["source", v.source ? el("code", { text: v.source }) : "—"],
        ["commit", v.commit ? el("code", { title: v.commit, text: v.commit.slice(0, 12) }) : "—"],
        ["indexed", when(v.indexed_at)],
        ["size", `${plural(v.pages ?? 0, "page")} · ${plural(v.nodes ?? 0, "node")}`],
      ]),
    );
    const pinned = versions.find((x) => x.version_match);
    clear(
      pin,
      pinned
        ? el(
            "p",
            { class: "pin" },
            badge(pinned.version_match, `pin-${pinned.version_match}`),
            ` project wants ${pinned.wanted ?? pinned.version} · reads ${pinned.version}`,
          )
        : null,
      lib.project ? el("p", { class: "pin-note muted", text: `project: ${lib.project}` }) : null,
    );
  };
  const select = el(
    "select",
    { id: `${id}-version`, class: "lib-version", "aria-label": `${lib.name} version`, disabled: versions.length < 2 },
    versions.map((v, i) => {
      const marks = [];
      if (v.version_match) marks.push(`pinned, ${v.version_match}`);
      else if (v.default) marks.push("default");
      if (i === 0) marks.push("newest");
      return el("option", {
        value: v.version,
        text: marks.length ? `${v.version} (${marks.join(", ")})` : v.version,
        selected: v.version === lib.version,
      });
    }),
  );
  select.addEventListener("change", () => {
    lib.version = select.value;
    show();
    schedule(0);
  });
  const tick = choosing
    ? el("input", { type: "checkbox", id: `${id}-on`, class: "lib-on", checked: lib.on })
    : null;
  if (tick) {
    tick.addEventListener("change", () => {
      lib.on = tick.checked;
      schedule(0);
    });
  }
  show();
  return el(
    "li",
    { class: "lib", dataset: { key: lib.key } },
    el(
      "div",
      { class: "lib-head" },
      tick,
      el("label", { for: tick ? `${id}-on` : `${id}-version`, class: "lib-name", text: lib.name }),
      el("label", { for: `${id}-version`, class: "inline", text: "version" }),
      select,
      lib.defaultOn ? null : badge("not read unless chosen", "warn"),
    ),
    pin,
    prov,
  );
}

/** A hit's library version and how it was chosen (a collection of libraries). */
function hitLibrary(hit) {
  const p = hit.provenance;
  if (!p) return null;
  const where = [p.source, p.commit ? `commit ${p.commit.slice(0, 12)}` : ""].filter(Boolean).join(" @ ");
  return el(
    "p",
    { class: "hit-lib" },
    el("code", { class: "lib-label", text: p.library }),
    " ",
    badge(choiceText(p.version_match, p.wanted), `choice choice-${p.version_match}`),
    where ? el("span", { class: "meta", text: ` ${where}` }) : null,
  );
}

/* ---- the answer as an agent reads it (POST /search?format=markdown) ---------------------- */

async function loadAnswer(mine = state.seq) {
  const box = $("answer");
  const body = state.lastBody;
  if (!body) {
    clear(box, el("p", { class: "muted", text: "Search, then open this to read the answer an agent gets." }));
    return;
  }
  box.setAttribute("aria-busy", "true");
  document.body.dataset.answerState = "loading";
  const headers = { Accept: "text/markdown", "Content-Type": "application/json" };
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  try {
    const resp = await fetch("/search?format=markdown", { method: "POST", headers, body: JSON.stringify(body) });
    if (!resp.ok) {
      let data = null;
      try {
        data = await resp.json();
      } catch {
        data = null;
      }
      throw new ApiError(resp.status, data?.error);
    }
    const text = await resp.text();
    if (mine !== state.seq) return;
    clear(box, el("div", { class: "content md answer-md" }, markdown(text)));
    document.body.dataset.answerState = "done";
  } catch (e) {
    if (mine === state.seq) clear(box, errorBox(e));
    document.body.dataset.answerState = "error";
  } finally {
    box.removeAttribute("aria-busy");
  }
}

/* ---- search ----------------------------------------------------------------------------- */

function params() {
  const out = {
    limit: Number($("limit").value),
    mode: $("mode").value,
    backfill: $("backfill").checked,
  };
  const library = libraryArg();
  if (library) out.library = library;
  return out;
}

function schedule(delay = DEBOUNCE_MS) {
  clearTimeout(state.timer);
  state.timer = setTimeout(runSearch, delay);
}

async function runSearch() {
  clearTimeout(state.timer);
  const query = $("q").value;
  const mine = ++state.seq;
  if (state.controller) state.controller.abort();
  state.controller = null;
  syncUrl();
  if (!query.trim()) {
    state.last = null;
    state.lastBody = null;
    clear($("results"));
    $("results-empty").hidden = false;
    $("results-empty").textContent = "Type a query to search.";
    $("status").textContent = "";
    document.body.dataset.searchState = "idle";
    return;
  }
  if (state.libs.length && !state.libs.some((l) => l.on)) {
    state.last = null;
    clear($("results"));
    $("results-empty").hidden = false;
    $("results-empty").textContent = "No library chosen: tick one in the libraries panel.";
    $("status").textContent = "";
    document.body.dataset.searchState = "done";
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  document.body.dataset.searchState = "loading";
  $("results").setAttribute("aria-busy", "true");
  $("status").textContent = "searching…";
  try {
    const body = { query, ...params() };
    const data = await api("POST", "/search", body, controller.signal);
    if (mine !== state.seq) return; // a newer query was typed meanwhile: drop this answer
    state.lastBody = body;
    renderSearch(query, data);
    if ($("answer-box").open) loadAnswer(mine);
    document.body.dataset.searchState = "done";
  } catch (e) {
    if (e.name === "AbortError" || mine !== state.seq) return;
    clear($("results"));
    $("results-empty").hidden = true;
    clear($("status"), errorBox(e));
    document.body.dataset.searchState = "error";
  } finally {
    if (mine === state.seq) $("results").removeAttribute("aria-busy");
  }
}

function lensLabel(name) {
  if (name === "bm25") return "BM25 · all";
  if (name === "dense") return "dense · all";
  if (name === "backfill") return "backfill";
  const [kind, dim] = name.split(":");
  return `${kind === "bm25" ? "BM25" : kind} · ${dim}`;
}

function lensKind(name) {
  return name.split(":")[0];
}

function renderSearch(query, data) {
  state.last = data;
  const diag = data.diagnostics || {};
  const plan = diag.plan || null;
  setHighlight(query, plan);
  const lenses = diag.lenses || [];
  const depth = Object.fromEntries(lenses.map((l) => [l.name, l.depth]));
  const order = lenses.map((l) => l.name);
  const moves = Object.fromEntries((diag.rerank?.moves || []).map((m) => [m.uid, m]));
  const hits = data.results || [];
  const list = clear($("results"));
  for (const hit of hits) list.append(renderHit(hit, order, depth, moves));
  $("results-empty").hidden = hits.length > 0;
  $("results-empty").textContent = "No results. The Prism shows why.";
  const total = diag.total_hits ?? hits.length;
  clear(
    $("status"),
    `${hits.length} of ${total} result${total === 1 ? "" : "s"} · ${fmt(diag.total_ms, 1)} ms`,
    plan?.rewrites?.rewrites?.length
      ? el("span", { class: "dym" }, " · searched for ", el("em", { text: plan.rewrites.display.join(" ") }))
      : null,
  );
  renderPrism(query, data);
}

function renderHit(hit, order, depth, moves) {
  const names = [...order];
  for (const n of Object.keys(hit.lenses || {})) if (!names.includes(n)) names.push(n);
  const lensRows = names.map((name) => {
    const rank = hit.lenses?.[name];
    const d = depth[name] || 100;
    const label = lensLabel(name);
    if (rank === undefined) {
      return el(
        "li",
        { class: `lens ${lensKind(name)} missing`, "aria-label": `${label}: not found` },
        el("span", { class: "lens-name", text: label }),
        bar(0),
        el("span", { class: "lens-rank", text: "–" }),
      );
    }
    const share = name === "backfill" ? 1 : 1 - Math.log(rank) / Math.log(d + 1);
    return el(
      "li",
      { class: `lens ${lensKind(name)}`, "aria-label": `${label}: rank ${rank} of ${d}` },
      el("span", { class: "lens-name", text: label }),
      bar(share, lensKind(name)),
      el("span", { class: "lens-rank", text: name === "backfill" ? "yes" : `#${rank}` }),
    );
  });
  const move = moves[hit.uid];
  let moveChip = null;
  if (move) {
    const from = move.from ?? "new";
    const delta = typeof move.from === "number" ? move.from - move.to : null;
    const arrow = delta === null ? "+" : delta > 0 ? "↑" : delta < 0 ? "↓" : "=";
    const cls = delta === null || delta > 0 ? "up" : delta < 0 ? "down" : "same";
    moveChip = el(
      "li",
      { class: `lens rerank ${cls}`, title: move.why, "aria-label": `graph rerank: ${from} to ${move.to}, ${move.why}` },
      el("span", { class: "lens-name", text: "graph rerank" }),
      el("span", { class: "move", text: `${from} → ${move.to} ${arrow}` }),
      el("span", { class: "why", text: move.why }),
    );
  }
  return el(
    "li",
    { class: hit.uid === state.current ? "hit selected" : "hit", dataset: { uid: hit.uid } },
    el(
      "h3",
      { class: "hit-head" },
      el("button", {
        type: "button",
        class: "hit-open linkish",
        text: hit.title || hit.uid,
        "aria-controls": "node-pane",
        onclick: () => openNode(hit.uid, { reset: true }),
      }),
    ),
    el(
      "p",
      { class: "hit-meta" },
      el("span", { class: "rank", text: `#${hit.rank}` }),
      badge(hit.kind, "kind"),
      el("code", { class: "uid", text: hit.uid }),
      el("span", { class: "score", text: `score ${fmt(hit.score, 4)}` }),
      hit.lenses?.backfill ? badge("backfill", "warn") : null,
    ),
    hitLibrary(hit),
    el("p", { class: "snippet" }, inline(hit.snippet || "")),
    hit.group?.length
      ? el(
          "p",
          { class: "hit-group" },
          `also on this page (${hit.group.length}): `,
          hit.group.map((uid, i) => [i ? ", " : "", nodeButton(uid, uid.split("#").pop())]),
        )
      : null,
    el("ul", { class: "lenses", "aria-label": "rank in each lens" }, lensRows, moveChip),
  );
}

/* ---- the Prism -------------------------------------------------------------------------- */

function renderPrism(query, data) {
  const diag = data.diagnostics || {};
  const plan = diag.plan;
  const root = el("div", {});
  root.append(
    kv([
      ["query", el("code", { text: query })],
      ["mode", diag.mode],
      ["total", el("strong", { text: `${fmt(diag.total_ms, 1)} ms` })],
      ["root", el("code", { class: "root", title: data.root, text: shortRoot(data.root) })],
      ["hits", `${diag.total_hits ?? "—"} after the gate, ${diag.fusion?.candidates ?? "—"} fused (RRF k=${diag.fusion?.k ?? 60})`],
    ]),
  );
  if (plan) {
    root.append(prismRewrites(plan), prismRoutes(plan), prismDims(plan));
  } else {
    root.append(el("p", { class: "muted", text: `mode ${diag.mode}: the plain legs run, no plan.` }));
  }
  root.append(prismLenses(diag));
  if (diag.filters && Object.keys(diag.filters).length) {
    root.append(
      section("Filters and exclusions", true, kv([
        ["filters", JSON.stringify(diag.filters.filters || {})],
        ["excluded", (diag.filters.excluded || []).join(", ") || "—"],
        ["removed", diag.filters.removed],
      ])),
    );
  }
  if (diag.gate) root.append(prismGate(diag.gate));
  if (diag.boost) root.append(prismBoost(diag.boost));
  if (diag.rerank) root.append(prismRerank(diag.rerank));
  root.append(prismTimings(diag));
  clear($("prism"), root);
}

function prismRewrites(plan) {
  const rw = plan.rewrites || {};
  const items = (rw.rewrites || []).map((r) =>
    el(
      "li",
      { class: "rewrite" },
      el("span", { class: "from", text: r.original }),
      el("span", { class: "arrow", "aria-label": "rewritten to", text: " → " }),
      el("span", { class: "to", text: (r.replacement || []).join(" ") }),
      " ",
      badge(r.kind, "kind"),
      el("p", { class: "reason", text: r.reason }),
    ),
  );
  const body = [
    items.length
      ? el("ul", { class: "rewrites" }, items)
      : el("p", { class: "muted", text: "No rewrite: every term has hits in the corpus." }),
    rw.rewrites?.length ? kv([["searched as", el("em", { text: (rw.display || []).join(" ") })]]) : null,
    kv([
      ["zero-hit", (rw.zero_hit || []).join(", ") || "none"],
      ["noise", (rw.noise || []).join(", ") || "none"],
      ["real words, no hits", (rw.known_zero_hit || []).join(", ") || "none"],
      ["noise fraction", fmt(rw.noise_fraction ?? 0, 2)],
    ]),
  ];
  return section(`Rewrites (${items.length})`, true, body);
}

function prismRoutes(plan) {
  const rows = (plan.routes || []).map((r) => {
    const idf = Object.entries(r.idf || {}).map(([d, v]) =>
      el("span", { class: `idf${d === r.dim ? " chosen" : ""}`, text: `${d} ${fmt(v, 3)}` }),
    );
    const guarded = (r.guarded || []).map((d) => el("span", { class: "idf guarded", title: "DF guard", text: `${d} guarded` }));
    return [
      el("span", {}, el("code", { text: r.term }), r.emphatic ? badge("emphatic", "emph") : null),
      r.dim ? el("strong", { text: r.dim }) : el("span", { class: "muted", text: "unrouted" }),
      el("span", { title: ROUTE_REASONS[r.reason] || r.reason }, badge(r.reason, `r-${r.reason}`)),
      el("span", { class: "idfs" }, idf.length || guarded.length ? [...idf, ...guarded] : "—"),
    ];
  });
  const reasons = [...new Set((plan.routes || []).map((r) => r.reason))];
  const body = [
    rows.length
      ? table(["term", "→ dim", "reason", "idf per home (routed one marked)"], rows, "routes")
      : el("p", { class: "muted", text: "No terms." }),
    reasons.length
      ? el(
          "ul",
          { class: "legend" },
          reasons.map((r) => el("li", {}, badge(r), " ", ROUTE_REASONS[r] || r)),
        )
      : null,
  ];
  const fb = plan.fallback;
  if (fb) {
    body.push(
      el(
        "div",
        { class: "fallback" },
        el("h4", { text: "Embedding fallback (zero-IDF query)" }),
        kv([
          ["routed to", fb.dim || "none (only the anchors run)"],
          ["threshold", fmt(fb.threshold, 3)],
          ["top-1 cosine", Object.entries(fb.top1 || {}).map(([d, v]) => `${d} ${fmt(v, 3)}`).join(", ") || "—"],
        ]),
      ),
    );
  }
  return section(`Routes (${rows.length} terms)`, true, body);
}

function prismDims(plan) {
  const dims = plan.dimensions || [];
  const rows = dims.map((d) => [
    el("strong", { text: d.dim }),
    d.type,
    badge(d.via, `via-${d.via}`),
    el("span", {}, (d.terms || []).join(" "), d.emphatic ? badge("emphatic", "emph") : null),
    String(d.bm25_depth),
    d.type === "semantic" ? String(d.dense_depth) : "—",
  ]);
  const anchors = plan.anchors || {};
  const channels = plan.channels || [];
  return section(
    `Dimensions (${dims.length}) and channels`,
    true,
    rows.length
      ? table(["dimension", "type", "via", "terms", "BM25 depth", "dense depth"], rows, "dims")
      : el("p", { class: "muted", text: "No dimension routed: only the anchors run." }),
    kv([
      ["anchors", `BM25 over ${anchors.bm25 ?? "all"} + dense over ${anchors.dense ?? "_all"}, depth ${anchors.depth ?? "—"}`],
      [
        "weighed down in BM25",
        Object.keys(anchors.weights || {}).length
          ? Object.entries(anchors.weights).map(([s, w]) => `${s} (×${fmt(w, 2)})`).join(", ")
          : "none",
      ],
      [
        "channels",
        channels.length
          ? channels.map((c) => `${c.dim} (weight ${fmt(c.weight, 3)})`).join(", ")
          : "none (noise fraction 0 → no extra channel)",
      ],
      ["residual phrase", plan.residual || "none"],
      ["negations", (plan.negations || []).join(", ") || "none"],
      ["excluded", (plan.excluded || []).join(", ") || "none"],
    ]),
  );
}

function prismLenses(diag) {
  const lenses = diag.lenses || [];
  const rows = lenses.map((l) => [
    el("span", { class: `lens-dot ${lensKind(l.name)}` }, lensLabel(l.name)),
    l.kind,
    String(l.depth),
    String(l.hits),
    fmt(l.weight, 3),
    fmt(l.ms, 3),
  ]);
  return section(
    `Lenses (${lenses.length})`,
    false,
    table(["lens", "kind", "depth", "hits", "weight", "ms"], rows, "lens-table"),
  );
}

function prismGate(g) {
  if (g.rule === "none") {
    return section(
      "Coherence gate",
      true,
      el("p", { text: `${g.routed} routed dimension${g.routed === 1 ? "" : "s"}: nothing to be coherent across, every candidate passes.` }),
    );
  }
  const per = Object.entries(g.per_dimension || {}).map(([d, n]) =>
    el(
      "li",
      { class: "meter", "aria-label": `${d}: ${n} of ${g.candidates} candidates pass` },
      el("span", { class: "lens-name", text: d }),
      bar(g.candidates ? n / g.candidates : 0, "gate"),
      el("span", { class: "lens-rank", text: `${n}/${g.candidates}` }),
    ),
  );
  const thr = Object.entries(g.dense_threshold || {}).map(([k, v]) => [el("code", { text: k }), fmt(v, 4)]);
  return section(
    "Coherence gate",
    true,
    kv([
      ["rule", `${g.rule === "strict_and" ? "strict AND" : "N−1"} over ${g.routed} dimensions`],
      ["relaxed", g.relaxed ? "yes: strict AND left nothing, fell back to N−1" : "no"],
      ["candidates", String(g.candidates)],
      ["passed", el("strong", { text: String(g.passed) })],
      ["rejected", String(g.rejected)],
      ["backfilled", String(g.backfilled)],
    ]),
    el("h4", { text: "Passing per dimension" }),
    el("ul", { class: "meters" }, per),
    thr.length ? el("h4", { text: `Dense top-share thresholds (${g.dense_top || "sample"})` }) : null,
    thr.length ? table(["dimension@home", "cosine ≥"], thr, "thr") : null,
  );
}

function prismBoost(b) {
  return section(
    "Residual boost",
    b.applied,
    b.applied
      ? kv([
          ["applied", "yes: rrf × (1 + factor · sim_norm)"],
          ["phrase", b.phrase ?? "—"],
          ["factor", fmt(b.factor, 2)],
          ["similarity range", (b.sim_range || []).map((x) => fmt(x, 4)).join(" … ")],
        ])
      : kv([["applied", "no"], ["why", b.reason || "—"]]),
  );
}

function prismRerank(r) {
  if (!r.applied) {
    return section("Graph rerank", false, kv([["applied", "no"], ["why", r.reason || "—"]]));
  }
  const rows = (r.moves || []).map((m) => [
    nodeButton(m.uid, m.uid),
    el("span", { class: "move", text: `${m.from ?? "new"} → ${m.to}` }),
    el("span", { class: "why", text: m.why }),
  ]);
  return section(
    `Graph rerank (${(r.moves || []).length} moves)`,
    false,
    kv([
      ["window", String(r.window)],
      ["injected", String(r.injected)],
      ["truncated", r.truncated ? "yes (work cap)" : "no"],
    ]),
    rows.length ? table(["node", "rank", "why"], rows, "moves") : null,
  );
}

function prismTimings(diag) {
  const t = diag.timings_ms || {};
  const total = diag.total_ms || Object.values(t).reduce((a, b) => a + b, 0) || 1;
  const rows = Object.entries(t).map(([stage, ms]) =>
    el(
      "li",
      { class: "meter", "aria-label": `${stage}: ${fmt(ms, 3)} ms` },
      el("span", { class: "lens-name", text: stage }),
      bar(ms / total, "time"),
      el("span", { class: "lens-rank", text: `${fmt(ms, 2)} ms` }),
    ),
  );
  return section(
    `Timings · ${fmt(diag.total_ms, 1)} ms`,
    true,
    el("ul", { class: "meters" }, rows),
    kv([
      ["total", `${fmt(diag.total_ms, 3)} ms`],
      ["root", el("code", { class: "root-full", text: diag.root || "—" })],
    ]),
  );
}

/* ---- a node: content, related, learning path -------------------------------------------- */

function nodeButton(uid, text, extra = {}) {
  return el("button", {
    type: "button",
    class: "linkish",
    text: text || uid,
    title: uid,
    onclick: () => openNode(uid),
    ...extra,
  });
}

async function openNode(uid, { reset = false, back = false } = {}) {
  if (reset) state.history = [];
  else if (!back && state.current && state.current !== uid) state.history.push(state.current);
  state.current = uid;
  syncUrl();
  const mine = ++state.nodeSeq;
  for (const li of document.querySelectorAll("#results .hit")) {
    li.classList.toggle("selected", li.dataset.uid === uid);
  }
  const box = $("node");
  box.setAttribute("aria-busy", "true");
  clear(box, el("p", { class: "muted", text: `loading ${uid}…` }));
  let rec;
  try {
    rec = await api("GET", nodePath(uid));
  } catch (e) {
    if (mine === state.nodeSeq) clear(box, navBar(uid), errorBox(e));
    box.removeAttribute("aria-busy");
    return;
  }
  if (mine !== state.nodeSeq) return;
  const related = el("div", { class: "related" }, el("p", { class: "muted", text: "loading…" }));
  const path = el("div", { class: "path" }, el("p", { class: "muted", text: "loading…" }));
  clear(
    box,
    navBar(uid),
    renderRecord(rec),
    el("h4", { id: "related-title" }, "Related nodes"),
    relatedControls(uid, related),
    related,
    el("h4", { id: "path-title" }, "Learning path"),
    path,
  );
  box.removeAttribute("aria-busy");
  const title = box.querySelector(".node-title");
  if (title) title.focus({ preventScroll: false });
  loadRelated(uid, related, mine);
  loadPath(uid, path, mine);
}

function navBar(uid) {
  return el(
    "div",
    { class: "node-nav" },
    state.history.length
      ? el("button", {
          type: "button",
          class: "small",
          text: "← back",
          onclick: () => openNode(state.history.pop(), { back: true }),
        })
      : null,
    el("code", { class: "uid", text: uid }),
  );
}

function renderRecord(rec) {
  const dims = rec.dims || {};
  const title = typeof dims.title === "string" && dims.title ? dims.title : rec.uid;
  const meta = rec.meta || {};
  const chips = [];
  for (const [k, v] of Object.entries(dims)) {
    if (k === "title" || k === "body" || k === "code") continue;
    const s = Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
    if (s.length <= 60) chips.push(el("span", { class: "chip", text: `${k}: ${s}` }));
  }
  const longDims = Object.entries(dims).filter(
    ([k, v]) => k !== "title" && k !== "body" && k !== "code" && typeof v === "string" && v.length > 60,
  );
  const content = typeof rec.content === "string" && rec.content ? rec.content : dims.body || "";
  const edges = rec.edges || [];
  return el(
    "article",
    { class: "record" },
    el("h3", { class: "node-title", tabindex: "-1", text: title }),
    el(
      "p",
      { class: "hit-meta" },
      badge(rec.kind, "kind"),
      meta.path ? el("span", { class: "meta", text: meta.line ? `${meta.path}:${meta.line}` : meta.path }) : null,
      meta.url ? el("span", { class: "meta", text: meta.url }) : null,
    ),
    chips.length ? el("p", { class: "chips" }, chips) : null,
    longDims.map(([k, v]) => el("p", { class: "dimtext" }, el("strong", { text: `${k}: ` }), highlighted(v))),
    content ? el("div", { class: "content md", "aria-label": "content" }, markdown(content)) : null,
    typeof rec.code === "string" && !content.includes(rec.code)
      ? el("pre", { class: "content code", tabindex: "0", "aria-label": "code" }, rec.code)
      : null,
    edges.length
      ? el(
          "div",
          { class: "edges" },
          el("h4", { text: `Out-edges (${edges.length})` }),
          el("ul", { class: "links" }, edges.map((e) => el("li", {}, badge(e.label, "label"), " ", nodeButton(e.dst)))),
        )
      : null,
  );
}

function relatedControls(uid, box) {
  const dir = el(
    "select",
    { id: "rel-direction" },
    ["both", "out", "in"].map((d) => el("option", { value: d, text: d })),
  );
  const depth = el(
    "select",
    { id: "rel-depth" },
    [1, 2, 3, 4].map((d) => el("option", { value: String(d), text: String(d) })),
  );
  const reload = () => loadRelated(uid, box, state.nodeSeq, dir.value, depth.value);
  dir.addEventListener("change", reload);
  depth.addEventListener("change", reload);
  return el(
    "div",
    { class: "controls" },
    el("label", { for: "rel-direction", class: "inline", text: "direction" }),
    dir,
    el("label", { for: "rel-depth", class: "inline", text: "depth" }),
    depth,
  );
}

async function loadRelated(uid, box, mine, direction = "both", depth = "1") {
  const q = new URLSearchParams({ direction, depth, limit: "50" });
  try {
    const data = await api("GET", `${nodePath(uid)}/related?${q}`);
    if (mine !== state.nodeSeq) return;
    const items = data.items || [];
    clear(
      box,
      items.length
        ? el(
            "ul",
            { class: "links", "aria-labelledby": "related-title" },
            items.map((it) =>
              el(
                "li",
                {},
                nodeButton(it.uid, it.title || it.uid),
                " ",
                badge(it.kind, "kind"),
                " ",
                el("span", {
                  class: "via",
                  text: (it.path || [])
                    .map((p) => `${p.direction === "in" ? "←" : "→"} ${p.label}`)
                    .join(" "),
                }),
              ),
            ),
          )
        : el("p", { class: "muted", text: "No related node." }),
      data.truncated ? el("p", { class: "muted", text: "truncated" }) : null,
    );
  } catch (e) {
    if (mine === state.nodeSeq) clear(box, errorBox(e));
  }
}

async function loadPath(uid, box, mine) {
  try {
    const data = await api("GET", `/learning-path?${new URLSearchParams({ target: uid })}`);
    if (mine !== state.nodeSeq) return;
    const steps = data.steps || [];
    clear(
      box,
      el(
        "ol",
        { class: "steps", "aria-labelledby": "path-title" },
        steps.map((s) =>
          el(
            "li",
            {},
            nodeButton(s.uid, s.title || s.uid),
            " ",
            badge(s.kind, "kind"),
            el("span", { class: "why", text: ` ${s.why}` }),
            s.context?.length
              ? el(
                  "span",
                  { class: "context" },
                  " in ",
                  s.context.map((c, i) => [i ? " › " : "", nodeButton(c.uid, c.title || c.uid)]),
                )
              : null,
          ),
        ),
      ),
      (data.notes || []).map((n) => el("p", { class: "muted", text: n })),
      data.cycles?.length ? el("p", { class: "muted", text: `cycles: ${JSON.stringify(data.cycles)}` }) : null,
      data.truncated ? el("p", { class: "muted", text: "truncated" }) : null,
    );
  } catch (e) {
    if (mine === state.nodeSeq) clear(box, errorBox(e));
  }
}

/* ---- the graph console ------------------------------------------------------------------ */

function cell(col, v) {
  if (v === null || v === undefined) return el("span", { class: "muted", text: "null" });
  if (typeof v === "string" && /(^|\.)uid$/.test(col)) return nodeButton(v);
  if (typeof v === "object") return el("code", { text: JSON.stringify(v) });
  return String(v);
}

async function runGraph(ev) {
  if (ev) ev.preventDefault();
  const out = $("graph-out");
  let params = {};
  const raw = $("gparams").value.trim();
  if (raw) {
    try {
      params = JSON.parse(raw);
    } catch (e) {
      clear(out, errorBox({ code: "params", message: `parameters are not JSON: ${e.message}` }));
      return;
    }
  }
  out.setAttribute("aria-busy", "true");
  clear(out, el("p", { class: "muted", text: "running…" }));
  try {
    const data = await api("POST", "/graph/query", { query: $("gq").value, params });
    const cols = data.columns || [];
    const rows = data.rows || [];
    const stats = data.stats || {};
    clear(
      out,
      el(
        "p",
        { class: "graph-meta" },
        `${rows.length} row${rows.length === 1 ? "" : "s"} · ${fmt(data.elapsed_ms, 2)} ms`,
        data.truncated ? badge("truncated", "warn") : null,
        ` · limit ${stats.limit ?? "—"}, timeout ${fmt(stats.timeout_ms ?? 250, 0)} ms, `,
        `${stats.traversals ?? 0} traversals, ${stats.expansions ?? 0} expansions`,
      ),
      rows.length
        ? table(cols, rows.map((r) => r.map((v, i) => cell(cols[i] || "", v))), "graph-table")
        : el("p", { class: "muted", text: "No rows." }),
    );
  } catch (e) {
    clear(out, errorBox(e));
  } finally {
    out.removeAttribute("aria-busy");
  }
}

/* ---- page state, keys, start-up --------------------------------------------------------- */

function syncUrl() {
  const u = new URL(location.href);
  const q = $("q").value;
  if (q) u.searchParams.set("q", q);
  else u.searchParams.delete("q");
  if (state.current) u.searchParams.set("node", state.current);
  else u.searchParams.delete("node");
  if (u.href !== location.href) history.replaceState(null, "", u);
}

const ROOT_POLL_MS = 5000;

async function loadRoots() {
  try {
    const data = await api("GET", "/roots");
    const head = (data.roots || []).find((r) => r.id === data.current) || {};
    // another writer published: the server follows HEAD, the page says when it moved
    if (state.root && data.current !== state.root) state.rootChange = { from: state.root, at: new Date() };
    state.root = data.current;
    const line = clear($("root-line"), "root ", el("code", { title: data.current, text: shortRoot(data.current) }));
    if (head.nodes !== undefined) line.append(` · ${head.nodes} nodes · ${head.edges} edges`);
    if (head.created) line.append(` · published ${head.created.slice(0, 19).replace("T", " ")}`);
    if (state.rootChange) {
      const c = state.rootChange;
      line.append(" · ", el("strong", { class: "root-changed", text: `root changed at ${c.at.toLocaleTimeString()} (was ${shortRoot(c.from)}): search again for fresh results` }));
    }
  } catch (e) {
    if (e.status !== 401) $("root-line").textContent = `cannot read the roots: ${e.message}`;
  }
}

function resultButtons() {
  return [...document.querySelectorAll("#results .hit-open")];
}

function onKey(ev) {
  const t = ev.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
  if (ev.key === "/" && !typing && !ev.ctrlKey && !ev.metaKey) {
    ev.preventDefault();
    $("q").focus();
    $("q").select();
    return;
  }
  if (t.classList?.contains("hit-open") && (ev.key === "ArrowDown" || ev.key === "ArrowUp")) {
    const buttons = resultButtons();
    const i = buttons.indexOf(t) + (ev.key === "ArrowDown" ? 1 : -1);
    ev.preventDefault();
    if (i < 0) $("q").focus();
    else if (i < buttons.length) buttons[i].focus();
  }
}

function start() {
  $("graph-labels").textContent = EDGE_LABELS.join(", ");
  $("api-key").value = state.key;
  const q = $("q");
  q.addEventListener("input", () => schedule());
  q.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown") {
      const first = resultButtons()[0];
      if (first) {
        ev.preventDefault();
        first.focus();
      }
    } else if (ev.key === "Escape") {
      q.value = "";
      runSearch();
    }
  });
  $("search-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    runSearch();
  });
  for (const id of ["mode", "limit", "backfill"]) $(id).addEventListener("change", () => schedule(0));
  $("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.key = $("api-key").value.trim();
    if (state.key) sessionStorage.setItem(KEY_STORE, state.key);
    else sessionStorage.removeItem(KEY_STORE);
    $("key-box").open = false;
    loadRoots();
    loadLibraries();
    if (q.value.trim()) runSearch();
  });
  $("graph-form").addEventListener("submit", runGraph);
  for (const id of ["gq", "gparams"]) {
    $(id).addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) runGraph(ev);
    });
  }
  $("graph-example").addEventListener("change", (ev) => {
    const ex = GRAPH_EXAMPLES[Number(ev.target.value)];
    if (ev.target.value !== "" && ex) {
      $("gq").value = ex[0];
      $("gparams").value = ex[1];
    }
  });
  $("answer-box").addEventListener("toggle", () => {
    if ($("answer-box").open) loadAnswer();
  });
  document.addEventListener("keydown", onKey);
  loadRoots();
  const libsLoaded = loadLibraries();
  setInterval(() => { if (!document.hidden) loadRoots(); }, ROOT_POLL_MS);
  const url = new URL(location.href);
  const initial = url.searchParams.get("q");
  const node = url.searchParams.get("node");
  if (initial) {
    q.value = initial;
    libsLoaded.then(runSearch);
  }
  if (node) openNode(node, { reset: true });
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", start);
