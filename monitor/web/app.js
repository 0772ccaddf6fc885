// The existence-loop monitor's dashboard: plain JavaScript, no build step.
// It shows one page of agents at a time (never every card), refreshes the
// visible cards when their events arrive, and streams the thoughts log.
"use strict";
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const $ = (id) => document.getElementById(id);
  const view = { q: "", sort: "load", offset: 0, limit: 24, total: 0 };
  const cards = new Map(); // agent id → card element
  const kinds = ["goal_chosen", "goal_ended", "worldview_changed", "question_added", "opinion_added",
    "stressor_added", "stressor_resolved", "stressor_dropped", "fallback", "crisis", "crisis_reset",
    "anticipation", "cycle", "model_call", "tool_call", "task", "message", "error", "dropped",
    "context_overflow", "context_compacted", "slot", "slot_dropped", "mind_failed", "budget_exhausted",
    "workflow_step", "working_memory", "commissioning"];
  const thoughtKinds = new Set(["goal_chosen", "goal_ended", "worldview_changed", "question_added",
    "opinion_added", "stressor_added", "stressor_resolved", "fallback", "crisis", "crisis_reset",
    "message", "task", "error", "tool_call", "anticipation", "context_overflow", "context_compacted",
    "slot", "slot_dropped", "mind_failed", "budget_exhausted", "workflow_step", "working_memory", "commissioning"]);

  async function api(method, path, body) {
    const opts = { method, headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(path, opts);
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || res.status + " " + res.statusText);
    return data;
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  function bar(fraction, cls) {
    const fill = el("div", { class: cls || "" });
    fill.style.width = Math.round(Math.max(0, Math.min(1, fraction)) * 100) + "%";
    return el("div", { class: "bar" }, fill);
  }

  function age(seconds) {
    if (seconds < 60) return Math.round(seconds) + "s";
    if (seconds < 3600) return Math.round(seconds / 60) + "m";
    if (seconds < 86400) return (seconds / 3600).toFixed(1) + "h";
    return (seconds / 86400).toFixed(1) + "d";
  }

  // chart draws the load history as an SVG polyline (0–1 upwards), with the
  // level thresholds as faint lines.
  function chart(points) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("class", "chart");
    svg.setAttribute("viewBox", "0 0 100 40");
    svg.setAttribute("preserveAspectRatio", "none");
    for (const t of [0.35, 0.55, 0.75, 0.9]) {
      const l = document.createElementNS(ns, "line");
      l.setAttribute("x1", 0); l.setAttribute("x2", 100);
      l.setAttribute("y1", 40 - t * 40); l.setAttribute("y2", 40 - t * 40);
      svg.append(l);
    }
    if (points && points.length) {
      const n = points.length;
      const pts = points.map((p, i) => ((n === 1 ? 100 : (i * 100) / (n - 1)).toFixed(1) + "," + (40 - p.load * 40).toFixed(1)));
      if (n === 1) pts.unshift("0," + (40 - points[0].load * 40).toFixed(1));
      const pl = document.createElementNS(ns, "polyline");
      pl.setAttribute("points", pts.join(" "));
      svg.append(pl);
    }
    return svg;
  }

  function card(a) {
    let c = cards.get(a.id);
    if (!c) {
      c = el("article", { class: "card", "data-agent": a.id });
      const form = el("form", { class: "say" },
        el("input", { class: "msg", maxlength: "500", placeholder: "@" + a.name + " …", "aria-label": "message to " + a.name }),
        el("button", { type: "submit" }, "send"));
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const input = form.querySelector("input");
        const text = input.value.trim();
        if (!text) return;
        try {
          await api("POST", "api/messages", { text, agents: [a.id] });
          input.value = "";
          status(c.querySelector(".card-status"), "delivered to " + a.name);
        } catch (e) { status(c.querySelector(".card-status"), e.message); }
      });
      c.body = el("div", { class: "body" });
      c.append(c.body, form, el("p", { class: "status card-status" }));
      cards.set(a.id, c);
    }
    c.className = "card lvl-" + a.level;
    const b = el("div", { class: "body" });
    b.append(el("h3", {}, a.name + " ", el("span", { class: "id" }, a.id)));
    b.append(el("div", { class: "goal" }, a.goal ? "🎯 " + a.goal : "— between goals —"));
    b.append(el("div", { class: "meta" }, "suffering " + a.load.toFixed(2) + " (" + a.level + ")"));
    b.append(bar(a.load, "lvl-" + a.level));
    const ss = el("ul", { class: "stressors" });
    for (const s of a.stressors.slice(0, 5)) {
      ss.append(el("li", { class: "stressor", "data-type": s.type }, s.type + " " + s.severity.toFixed(2) + " — " + s.description, bar(s.severity)));
    }
    b.append(ss);
    if (a.slots && a.slots.length) b.append(slotList(a.slots.slice(0, 3), a.slots.length));
    if (a.consecutive_fallbacks > 0) {
      b.append(el("div", { class: "fallback" }, "⚠️ " + a.consecutive_fallbacks + " fallback(s) in a row: " + a.last_fallback_cause));
    }
    b.append(chart(a.history));
    if (a.usage && a.usage.calls) b.append(el("div", { class: "meta usage" }, usage(a)));
    if (a.budget) b.append(el("div", { class: "budget" + (a.budget.exhausted ? " spent" : "") }, budget(a.budget, a.waiting_for_budget)));
    if (a.worldview) b.append(el("div", { class: "worldview" }, "🧠 " + a.worldview));
    if (a.working_memory) b.append(el("div", { class: "working-memory", title: "working memory" }, "📝 " + JSON.stringify(a.working_memory)));
    const th = el("ul", { class: "thoughts" });
    for (const t of (a.thoughts || []).slice(-4)) th.append(el("li", {}, t.line));
    b.append(th);
    if (a.memories) {
      b.append(el("div", { class: "meta memories" }, "📚 " + a.memories.memories + " memories" +
        (a.memories.pending > 0 ? " (" + a.memories.pending + " waiting for an embedding)" : "")));
    }
    b.append(el("div", { class: "meta" }, "cycles " + a.cycles + (a.lease ? " · lease " + a.lease.owner : "") + (a.stopped ? " · STOPPED: " + a.stopped : "")));
    c.body.replaceWith(b);
    c.body = b;
    return c;
  }

  // slotList renders slots (most important first, as the API sends them)
  // in GLaDOS's form: "📌 Title: status — summary", stale ones marked.
  function slotList(slots, total) {
    const ul = el("ul", { class: "slots" });
    for (const s of slots) {
      const li = el("li", { class: "slot" + (s.stale ? " stale" : "") + (s.status === "failed" ? " failed" : ""), "data-slot": s.slot_id,
        title: "importance " + s.importance.toFixed(2) + (s.confidence ? ", confidence " + s.confidence.toFixed(2) : "") +
          (s.next_run ? ", next run in " + age(s.next_run) : "") + (s.updated_at ? ", updated " + s.updated_at : "") },
        "📌 ", el("b", {}, s.title), ": " + s.status + (s.summary ? " — " + s.summary : "") + (s.stale ? " (stale)" : ""));
      ul.append(li);
    }
    if (total > slots.length) ul.append(el("li", { class: "more" }, "… and " + (total - slots.length) + " more"));
    return ul;
  }

  async function loadSlots() {
    let data;
    try { data = await api("GET", "api/slots"); } catch (e) { $("shared").hidden = true; return; }
    $("shared").hidden = false;
    $("slots").replaceWith(Object.assign(slotList(data.slots, data.slots.length), { id: "slots" }));
    if (!data.slots.length) $("slots").append(el("li", { class: "more" }, "nothing reported yet"));
  }

  const num = (n) => Number(n).toLocaleString("en");

  // usage says what the agent's model calls used: "tokens 12,345 in + 678 out + 240 embedding (900 estimated) in 31 calls".
  function usage(a) {
    const u = a.usage;
    return "tokens " + num(u.input_tokens) + " in + " + num(u.output_tokens) + " out" +
      (u.embed_tokens ? " + " + num(u.embed_tokens) + " embedding" : "") +
      (u.estimated_tokens ? " (" + num(u.estimated_tokens) + " estimated)" : "") + " in " + num(u.calls) + (u.calls === 1 ? " call" : " calls") +
      ((a.usage_by_model || []).length > 1 ? " · " + a.usage_by_model.map((m) => m.model + " " + num(m.input_tokens + m.output_tokens + (m.embed_tokens || 0))).join(", ") : "");
  }

  // budget says where a token budget stands: "🪙 3,000 of 4,000 tokens per 1m — spent: waits until 12:01:03".
  function budget(b, waiting) {
    const win = b.window_ns >= 3.6e12 && b.window_ns % 3.6e12 === 0 ? (b.window_ns / 3.6e12) + "h"
      : b.window_ns >= 6e10 && b.window_ns % 6e10 === 0 ? (b.window_ns / 6e10) + "m" : (b.window_ns / 1e9) + "s";
    let s = "🪙 " + num(b.used) + " of " + num(b.tokens) + " tokens per " + win;
    if (b.exhausted) s += " — spent: autonomy waits" + (b.refills_at ? " until " + new Date(b.refills_at).toLocaleTimeString() : "");
    if (waiting) s += " · goal waiting for the budget";
    return s;
  }

  // lanes summarises the scheduler for the header: "autonomy 3 queued, 1 running, late 0.4/2.1 s · …".
  function lanes(s) {
    if (!s) return "";
    const sec = (x) => x < 10 ? x.toFixed(1) : Math.round(x).toString();
    return s.lanes.map((l) => l.lane + " " + l.queued + " queued, " + l.running + " running" +
      (l.cycles ? ", late " + sec(l.lateness_p50_seconds) + "/" + sec(l.lateness_p99_seconds) + " s" : "")).join(" · ") +
      (s.coalesced ? " · " + s.coalesced + " coalesced" : "") + concurrency(s.concurrency) +
      (s.held ? " · " + s.held + " held by budget" : "") + (s.budget ? " · runner " + budget(s.budget, false) : "");
  }

  // concurrency summarises the model server as the runner sees it: " · limit 6 (adaptive), 5 in flight, 0.62/0.50 s, 0 × 503".
  function concurrency(c) {
    if (!c) return "";
    const sec = (ns) => (ns / 1e9).toFixed(2);
    return " · limit " + c.limit + (c.adaptive ? " (adaptive)" : "") + ", " + c.in_flight + " in flight" +
      (c.rtt_ns ? ", latency " + sec(c.rtt_ns) + "/" + sec(c.min_rtt_ns) + " s" : "") + ", " + c.overloads + " × 503";
  }

  function status(node, text) { if (node) node.textContent = text; }

  let loading = null, again = false;
  async function loadAgents() {
    if (loading) { again = true; return loading; }
    const p = new URLSearchParams({ q: view.q, sort: view.sort, offset: view.offset, limit: view.limit, history: "1" });
    loading = api("GET", "api/agents?" + p).then((page) => {
      view.total = page.total;
      const box = $("cards"), seen = new Set();
      page.agents.forEach((a, i) => {
        const c = card(a);
        seen.add(a.id);
        if (box.children[i] !== c) box.insertBefore(c, box.children[i] || null);
      });
      for (const [id, c] of cards) if (!seen.has(id)) { c.remove(); cards.delete(id); }
      const to = $("say-to"), chosen = to.value;
      to.replaceChildren(el("option", { value: "" }, "every agent"), ...page.agents.map((a) => el("option", { value: a.id }, a.name)));
      to.value = seen.has(chosen) ? chosen : "";
      $("range").textContent = page.total === 0 ? "no agents" : (view.offset + 1) + "–" + (view.offset + page.agents.length) + " of " + page.total;
      $("prev").disabled = view.offset === 0;
      $("next").disabled = view.offset + view.limit >= page.total;
      $("req-count").textContent = page.pending_requests;
      $("lanes").textContent = lanes(page.scheduler);
    }).catch((e) => { $("range").textContent = e.message; })
      .finally(() => { loading = null; if (again) { again = false; loadAgents(); } });
    return loading;
  }

  async function loadRequests() {
    let data;
    try { data = await api("GET", "api/requests?status=pending"); } catch (e) { return; }
    const list = $("requests");
    list.replaceChildren();
    $("req-count").textContent = data.requests.length;
    for (const r of data.requests) {
      const text = el("textarea", { "aria-label": "answer to " + r.id, placeholder: "answer or reason" });
      const li = el("li", { class: "request", "data-id": r.id },
        el("div", {}, el("b", {}, r.id), " " + r.kind + " from " + r.agent + ", waiting " + age(r.age_seconds)),
        el("div", {}, r.text), text);
      const send = (st) => async () => {
        try {
          await api("POST", "api/requests/" + encodeURIComponent(r.id) + "/answer", { status: st, answer: text.value });
          loadRequests();
        } catch (e) { li.append(el("p", { class: "status" }, e.message)); }
      };
      for (const [label, st] of [["approve", "approved"], ["reject", "rejected"], ["answer", "answered"]]) {
        const btn = el("button", { type: "button", class: st }, label);
        btn.addEventListener("click", send(st));
        li.append(btn, " ");
      }
      list.append(li);
    }
  }

  async function loadTasks() {
    let data;
    try { data = await api("GET", "api/tasks"); } catch (e) { return; }
    $("tasks").replaceChildren(...data.tasks.slice(-10).reverse().map((t) =>
      el("li", {}, t.id + " [" + t.status + "] " + t.description + (t.assigned_to ? " → " + t.assigned_to : ""))));
  }

  function thought(line) {
    const list = $("thoughts");
    list.prepend(el("li", {}, line));
    while (list.children.length > 200) list.lastChild.remove();
  }

  let refresh = null;
  function soon() {
    if (!refresh) refresh = setTimeout(() => { refresh = null; loadAgents(); }, 250);
  }

  function connect() {
    const es = new EventSource("api/events");
    es.onopen = () => { $("conn").textContent = "live"; $("conn").className = "conn live"; };
    es.onerror = () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn"; };
    for (const k of kinds) {
      es.addEventListener(k, (m) => {
        const e = JSON.parse(m.data);
        if (thoughtKinds.has(k) && e.line) thought(e.line);
        if (k === "dropped") return;
        if (cards.has(e.agent_id) && k !== "model_call") soon();
        if (k === "tool_call" && e.tool && e.tool.name === "ask_human") loadRequests();
        if (k === "task") loadTasks();
        if ((k === "slot" || k === "slot_dropped" || k === "mind_failed") && !e.agent_id) loadSlots();
      });
    }
  }

  $("search").addEventListener("input", () => { view.q = $("search").value; view.offset = 0; loadAgents(); });
  $("sort").addEventListener("change", () => { view.sort = $("sort").value; view.offset = 0; loadAgents(); });
  $("prev").addEventListener("click", () => { view.offset = Math.max(0, view.offset - view.limit); loadAgents(); });
  $("next").addEventListener("click", () => { view.offset += view.limit; loadAgents(); });
  $("say").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const to = $("say-to").value, text = $("say-text").value.trim();
    try {
      await api("POST", "api/messages", { text, agents: to ? [to] : [] });
      $("say-text").value = "";
      status($("say-status"), "delivered");
    } catch (e) { status($("say-status"), e.message); }
  });
  $("task").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", "api/tasks", { description: $("task-text").value });
      $("task-text").value = "";
      loadTasks();
    } catch (e) { status($("say-status"), e.message); }
  });

  api("GET", "api/thoughts").then((d) => d.thoughts.forEach((t) => thought(t.line))).catch(() => {});
  loadAgents();
  loadRequests();
  loadTasks();
  loadSlots();
  connect();
  setInterval(loadRequests, 10000);
  setInterval(loadAgents, 15000);
})();
