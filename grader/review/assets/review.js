// The review page. Everything from the report is untrusted student text: it is only ever set with
// textContent / createTextNode (never innerHTML), and links are never made from it.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("review-data").textContent);
  var items = DATA.items || [];
  var questions = DATA.questions || [];
  var STORE = "grader-review:" + (DATA.key || "default");
  var REASONS = { pending_review: "待复核", low_confidence: "低置信度", needs_review: "需复核", veto: "否决", collusion: "疑似雷同" };

  function freshGroups() {
    var out = [];
    questions.forEach(function (q, qi) {
      (q.groups || []).forEach(function (g) { out.push({ q: qi, items: (g.items || []).slice(), similarity: g.similarity }); });
    });
    return out;
  }

  function load() {
    var saved = null;
    try { saved = JSON.parse(window.localStorage.getItem(STORE) || "null"); } catch (e) { saved = null; }
    var state = { by: "", decisions: {}, groups: freshGroups(), current: 0 };
    if (saved && typeof saved === "object") {
      state.by = typeof saved.by === "string" ? saved.by : "";
      state.decisions = saved.decisions && typeof saved.decisions === "object" ? saved.decisions : {};
      if (Array.isArray(saved.groups) && sameCover(saved.groups)) { state.groups = saved.groups; }
      state.current = Math.min(Math.max(0, saved.current | 0), Math.max(0, state.groups.length - 1));
    }
    return state;
  }

  function sameCover(groups) {
    var seen = {}, n = 0;
    for (var i = 0; i < groups.length; i++) {
      if (!groups[i] || !Array.isArray(groups[i].items)) { return false; }
      for (var j = 0; j < groups[i].items.length; j++) {
        var k = groups[i].items[j];
        if (typeof k !== "number" || k < 0 || k >= items.length || seen[k]) { return false; }
        seen[k] = true; n++;
      }
    }
    return n === items.length;
  }

  var state = load();

  function save() {
    try { window.localStorage.setItem(STORE, JSON.stringify(state)); } catch (e) { /* private mode: decisions live until the tab closes */ }
  }

  function decision(k) {
    if (!state.decisions[k]) { state.decisions[k] = { points: null, vetoes: {}, note: "", at: "" }; }
    return state.decisions[k];
  }

  function isDecided(k) {
    var it = items[k], d = state.decisions[k];
    if (!d) { return false; }
    if (it.criterion !== null && it.criterion !== undefined && (d.points === null || d.points === undefined)) { return false; }
    return (it.vetoes || []).every(function (v) { return d.vetoes && d.vetoes[v.id]; });
  }

  function groupDecided(g) { return g.items.every(isDecided); }

  // --- small DOM helpers (text only) ---
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (name) {
        if (name === "text") { node.textContent = attrs.text; }
        else if (name === "className") { node.className = attrs.className; }
        else { node.setAttribute(name, attrs[name]); }
      });
    }
    (children || []).forEach(function (c) { if (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return node;
  }

  function say(text) { document.getElementById("message").textContent = text || ""; }

  function highlighted(text, marks) {
    // The answer as text nodes, with the grader's evidence sentences wrapped in <mark>.
    var node = el("div", { className: "answer" });
    var spans = [];
    marks.forEach(function (m) {
      if (!m.sentence) { return; }
      var at = text.indexOf(m.sentence);
      if (at >= 0) { spans.push({ start: at, end: at + m.sentence.length, cls: m.cls, title: m.title }); }
    });
    spans.sort(function (a, b) { return a.start - b.start || b.end - a.end; });
    var pos = 0;
    spans.forEach(function (s) {
      if (s.start < pos) { return; }
      node.appendChild(document.createTextNode(text.slice(pos, s.start)));
      node.appendChild(el("mark", { className: s.cls, title: s.title || "", text: text.slice(s.start, s.end) }));
      pos = s.end;
    });
    node.appendChild(document.createTextNode(text.slice(pos)));
    return node;
  }

  function evidenceList(it) {
    var ev = it.evidence || {}, list = el("ul", { className: "evidence" }), marks = [];
    (ev.claims || []).forEach(function (c) {
      var how = c.via === "formula" ? "（公式）" : "";
      list.appendChild(el("li", { className: c.found ? "yes" : "no",
        text: (c.found ? "✓ " : "✗ ") + (c.label || c.id || "") + how + (c.sentence ? "：「" + c.sentence + "」" : "") }));
      if (c.found && c.sentence) { marks.push({ sentence: c.sentence, cls: "found", title: c.label || c.id }); }
    });
    (ev.misconceptions || []).forEach(function (m) {
      list.appendChild(el("li", { className: "bad",
        text: "误解 " + (m.label || m.id || "") + (m.cap !== undefined && m.cap !== null ? "（上限 " + m.cap + " 分）" : "") +
              (m.sentence ? "：「" + m.sentence + "」" : "") }));
      if (m.sentence) { marks.push({ sentence: m.sentence, cls: "misconception", title: m.label || m.id }); }
    });
    (ev.formulas || []).forEach(function (f) {
      var verdict = f.holds === true ? "成立" : f.holds === false ? "不成立" : "无法判定";
      list.appendChild(el("li", { className: f.holds === false ? "bad" : "",
        text: "公式 " + (f.text || "") + " → " + verdict + (f.meaning ? "（" + f.meaning + "）" : "") }));
    });
    (ev.flags || []).forEach(function (f) { list.appendChild(el("li", { text: "标记：" + f })); });
    if (typeof ev.copy_share === "number") { list.appendChild(el("li", { text: "与参考答案重合：" + Math.round(ev.copy_share * 100) + "%" })); }
    (it.vetoes || []).forEach(function (v) {
      list.appendChild(el("li", { className: "bad", text: "否决 " + v.id + "：" + (v.message || "") + (v.evidence ? " 证据：「" + v.evidence + "」" : "") }));
      if (v.evidence) { marks.push({ sentence: v.evidence, cls: "veto", title: v.id }); }
    });
    (it.collusion || []).forEach(function (c) {
      var share = typeof c.similarity === "number" ? Math.round(c.similarity * 100) + "%" : "";
      list.appendChild(el("li", { className: "bad", text: "与 " + (c.other || "?") + " 的答案相似 " + share }));
    });
    return { list: list, marks: marks };
  }

  function memberView(k, open) {
    var it = items[k], d = state.decisions[k] || {};
    var head = el("summary", null, [
      el("strong", { text: it.student || it.key }), " ",
      el("span", { className: "muted", text: it.submission }), " ",
      el("span", { className: "badge", text: "原分 " + (it.points === null || it.points === undefined ? "—" : it.points) + " / " + (it.max_points === null || it.max_points === undefined ? "—" : it.max_points) })
    ]);
    (it.reasons || []).forEach(function (r) { head.appendChild(el("span", { className: "badge " + r, text: REASONS[r] || r })); });
    if (isDecided(k)) { head.appendChild(el("span", { className: "badge decided", text: "已决定 " + (d.points === null || d.points === undefined ? "" : d.points + " 分") })); }
    var ev = evidenceList(it);
    var body = [head];
    if (it.confidence) { body.push(el("p", { className: "muted", text: "置信度：" + (it.confidence === "low" ? "低" : "高") + (it.confidence_reason ? "（" + it.confidence_reason + "）" : "") })); }
    body.push(it.text === null || it.text === undefined ? el("p", { className: "muted", text: "（报告里没有这份答案的文本）" }) : highlighted(it.text, ev.marks));
    if (it.feedback) { body.push(el("p", { className: "muted", text: "评分器反馈：" + it.feedback })); }
    body.push(ev.list);
    var node = el("details", { className: "member", "data-item": String(k) }, body);
    if (open) { node.open = true; }
    return node;
  }

  function label(q) {
    var id = q.answer_id || q.criterion || "", title = q.title || "";
    return title.indexOf(id) === 0 ? title : (id && title ? id + " · " + title : id || title);
  }

  function questionCard(q) {
    var card = el("section", { className: "card" }, [
      el("h2", { text: label(q) + (q.max_points !== null && q.max_points !== undefined ? "（" + q.max_points + " 分）" : "") })
    ]);
    if (q.question) { card.appendChild(el("div", { className: "question", text: q.question })); }
    if (q.description) { card.appendChild(el("p", { className: "muted", text: "评分标准：" + q.description })); }
    if (q.levels && q.levels.length) {
      var levels = el("ul", { className: "evidence" });
      q.levels.forEach(function (lv) { levels.appendChild(el("li", { text: lv.points + " 分：" + (lv.text || "") })); });
      card.appendChild(levels);
    }
    if (q.reference) { card.appendChild(el("details", null, [el("summary", { text: "参考答案" }), el("div", { className: "question", text: q.reference })])); }
    return card;
  }

  function render() {
    var g = state.groups[state.current];
    var decided = items.filter(function (_, k) { return isDecided(k); }).length;
    document.getElementById("progress").textContent = decided + " / " + items.length + " 已决定";
    renderNav();
    var main = document.getElementById("current");
    main.textContent = "";
    if (!g) { main.appendChild(el("p", { className: "card", text: "没有需要复核的答案。" })); return; }
    var q = questions[g.q] || {};
    main.appendChild(questionCard(q));
    var first = items[g.items[0]], d = state.decisions[g.items[0]] || {};
    var card = el("section", { className: "card", id: "group" });
    card.appendChild(el("h2", { text: "第 " + (state.current + 1) + " / " + state.groups.length + " 组 · " + g.items.length + " 份答案" +
      (g.items.length > 1 && typeof g.similarity === "number" ? "（相似度 ≥ " + Math.round(g.similarity * 100) + "%）" : "") +
      (groupDecided(g) ? " · 已决定" : "") }));
    var controls = el("div", { className: "controls" });
    if (first.criterion !== null && first.criterion !== undefined) {
      var top = typeof first.max_points === "number" ? first.max_points : 9;
      for (var p = 0; p <= Math.min(top, 9); p++) {
        var b = el("button", { type: "button", "data-points": String(p), text: p + " 分" });
        if (g.items.every(function (k) { return state.decisions[k] && state.decisions[k].points === p; })) { b.className = "chosen"; }
        controls.appendChild(b);
      }
      controls.appendChild(el("button", { type: "button", "data-action": "accept", text: "接受原分（a）" }));
    }
    var hasVeto = g.items.some(function (k) { return (items[k].vetoes || []).length; });
    if (hasVeto) {
      controls.appendChild(el("button", { type: "button", "data-action": "confirm", text: "确认否决（v）" }));
      controls.appendChild(el("button", { type: "button", "data-action": "clear", text: "撤销否决（x）" }));
    }
    if (g.items.length > 1) { controls.appendChild(el("button", { type: "button", "data-action": "split", text: "拆分本组（s）" })); }
    controls.appendChild(el("button", { type: "button", "data-action": "undo", text: "撤回决定（u）" }));
    card.appendChild(controls);
    var note = el("textarea", { id: "note", rows: "2", placeholder: "备注（m；写入 overrides 的 note）" });
    note.value = d.note || "";
    card.appendChild(note);
    var shown = Math.min(g.items.length, 30);
    g.items.slice(0, shown).forEach(function (k, n) { card.appendChild(memberView(k, n < 3)); });
    if (g.items.length > shown) { card.appendChild(el("p", { className: "muted", text: "另有 " + (g.items.length - shown) + " 份与上面相同或几乎相同的答案。" })); }
    main.appendChild(card);
  }

  function renderNav() {
    var nav = document.getElementById("groups");
    nav.textContent = "";
    var lastQ = -1, frag = document.createDocumentFragment();
    state.groups.forEach(function (g, n) {
      if (g.q !== lastQ) {
        var q = questions[g.q] || {};
        frag.appendChild(el("h3", { text: label(q) }));
        lastQ = g.q;
      }
      var first = items[g.items[0]] || {};
      var a = el("a", { href: "#", "data-group": String(n), text: (groupDecided(g) ? "✓ " : "· ") + (first.student || first.key || "") + (g.items.length > 1 ? " 等 " + g.items.length + " 份" : "") });
      if (groupDecided(g)) { a.className = "done"; }
      if (n === state.current) { a.className += " active"; }
      frag.appendChild(a);
    });
    nav.appendChild(frag);
    var active = nav.querySelector("a.active");
    if (active && active.scrollIntoView) { active.scrollIntoView({ block: "nearest" }); }
  }

  function now() { return new Date().toISOString().replace(/\.\d+Z$/, "Z"); }

  function each(fn) {
    var g = state.groups[state.current];
    if (!g) { return; }
    var stamp = now();
    g.items.forEach(function (k) { var d = decision(k); fn(d, items[k]); d.at = stamp; });
    save(); render();
  }

  function setPoints(p) {
    var g = state.groups[state.current];
    if (!g) { return; }
    var it = items[g.items[0]];
    if (it.criterion === null || it.criterion === undefined) { say("这一组只需决定否决：v 确认，x 撤销。"); return; }
    if (typeof it.max_points === "number" && p > it.max_points) { say("最多 " + it.max_points + " 分。"); return; }
    say("");
    each(function (d) { d.points = p; });
  }

  function act(action) {
    var g = state.groups[state.current];
    if (!g) { return; }
    if (action === "accept") {
      var it = items[g.items[0]];
      if (typeof it.points !== "number") { say("没有原分可接受。"); return; }
      each(function (d, member) { d.points = typeof member.points === "number" ? member.points : d.points; });
    } else if (action === "confirm" || action === "clear") {
      each(function (d, member) { (member.vetoes || []).forEach(function (v) { d.vetoes[v.id] = action; }); });
    } else if (action === "undo") {
      g.items.forEach(function (k) { delete state.decisions[k]; });
      save(); render();
    } else if (action === "split") {
      if (g.items.length < 2) { return; }
      var parts = g.items.map(function (k) { return { q: g.q, items: [k], similarity: 1 }; });
      state.groups.splice.apply(state.groups, [state.current, 1].concat(parts));
      say("已拆分为 " + parts.length + " 组。");
      save(); render();
    }
  }

  function go(n) {
    if (!state.groups.length) { return; }
    state.current = Math.max(0, Math.min(state.groups.length - 1, n));
    save(); render();
    window.scrollTo(0, 0);
  }

  function nextUndecided() {
    for (var step = 1; step <= state.groups.length; step++) {
      var n = (state.current + step) % state.groups.length;
      if (!groupDecided(state.groups[n])) { go(n); return; }
    }
    say("全部已决定，可以导出。");
  }

  // --- export: an overrides file that `python -m grader grade --overrides` reads ---
  function overrides() {
    var subs = {}, order = [];
    items.forEach(function (it, k) {
      var d = state.decisions[k];
      if (!d) { return; }
      var entry = subs[it.key];
      if (!entry) { entry = subs[it.key] = { criteria: {}, confirm_vetoes: [], clear_vetoes: [], notes: [] }; order.push(it.key); }
      if (it.criterion !== null && it.criterion !== undefined && typeof d.points === "number") {
        var c = { points: d.points };
        if (d.at) { c.at = d.at; }
        if (d.note) { c.note = d.note; }
        entry.criteria[it.criterion] = c;
      }
      Object.keys(d.vetoes || {}).forEach(function (id) {
        var list = d.vetoes[id] === "clear" ? entry.clear_vetoes : entry.confirm_vetoes;
        if (list.indexOf(id) < 0) { list.push(id); }
      });
      if (d.note) { entry.notes.push((it.criterion || it.answer_id || "") + "：" + d.note); }
    });
    var out = {};
    order.forEach(function (key) {
      var e = subs[key], o = {};
      if (Object.keys(e.criteria).length) { o.criteria = e.criteria; }
      if (e.confirm_vetoes.length) { o.confirm_vetoes = e.confirm_vetoes; }
      if (e.clear_vetoes.length) { o.clear_vetoes = e.clear_vetoes; }
      if (e.notes.length) { o.note = e.notes.join("；"); }
      if (Object.keys(o).length) { out[key] = o; }
    });
    return out;
  }

  function q(s) { return JSON.stringify(String(s)); }   // a JSON string is a valid YAML double-quoted scalar

  function toYaml(by, subs) {
    var lines = ["# 教师复核决定，由 review.html 导出（" + (DATA.source || "") + "）。",
                 "# 用法：python -m grader grade submissions/ --overrides 本文件；或合并进已提交的文件：",
                 "#       python -m grader review --apply 本文件 --overrides overrides.yml",
                 "by: " + q(by), "at: " + q(now()), "submissions:"];
    var keys = Object.keys(subs);
    if (!keys.length) { lines[lines.length - 1] = "submissions: {}"; }
    keys.forEach(function (key) {
      var e = subs[key];
      lines.push("  " + q(key) + ":");
      if (e.criteria) {
        lines.push("    criteria:");
        Object.keys(e.criteria).forEach(function (cid) {
          var c = e.criteria[cid], parts = ["points: " + c.points];
          if (c.at) { parts.push("at: " + q(c.at)); }
          if (c.note) { parts.push("note: " + q(c.note)); }
          lines.push("      " + q(cid) + ": {" + parts.join(", ") + "}");
        });
      }
      ["confirm_vetoes", "clear_vetoes"].forEach(function (name) {
        if (e[name]) { lines.push("    " + name + ": [" + e[name].map(q).join(", ") + "]"); }
      });
      if (e.note) { lines.push("    note: " + q(e.note)); }
    });
    return lines.join("\n") + "\n";
  }

  function download(name, text, type) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 2000);
  }

  function exportAs(kind) {
    var by = (state.by || "").trim();
    if (!by) { say("请先填写评分人（写入 overrides 的 by）。"); document.getElementById("reviewer").focus(); return; }
    var subs = overrides();
    var text = kind === "json"
      ? JSON.stringify({ by: by, at: now(), submissions: subs }, null, 2) + "\n"
      : toYaml(by, subs);
    download(kind === "json" ? "overrides.json" : "overrides.yml", text, kind === "json" ? "application/json" : "text/yaml");
    document.getElementById("export-text").value = text;
    document.getElementById("export").hidden = false;
    var n = Object.keys(subs).length;
    say("已导出 " + n + " 份提交的决定。");
  }

  // --- wiring ---
  var reviewer = document.getElementById("reviewer");
  reviewer.value = state.by;
  reviewer.addEventListener("input", function () { state.by = reviewer.value; save(); });
  document.getElementById("export-yaml").addEventListener("click", function () { exportAs("yaml"); });
  document.getElementById("export-json").addEventListener("click", function () { exportAs("json"); });
  document.getElementById("export-close").addEventListener("click", function () { document.getElementById("export").hidden = true; });
  document.getElementById("help-toggle").addEventListener("click", function () { var h = document.getElementById("help"); h.hidden = !h.hidden; });
  document.getElementById("groups").addEventListener("click", function (ev) {
    var a = ev.target.closest("a[data-group]");
    if (a) { ev.preventDefault(); go(Number(a.getAttribute("data-group"))); }
  });
  document.getElementById("current").addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b) { return; }
    if (b.hasAttribute("data-points")) { setPoints(Number(b.getAttribute("data-points"))); }
    else if (b.hasAttribute("data-action")) { act(b.getAttribute("data-action")); }
  });
  document.getElementById("current").addEventListener("input", function (ev) {
    if (ev.target.id !== "note") { return; }
    var g = state.groups[state.current];
    g.items.forEach(function (k) { decision(k).note = ev.target.value; });
    save();
  });

  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT")) {
      if (ev.key === "Escape") { t.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var k = ev.key;
    if (/^[0-9]$/.test(k)) { setPoints(Number(k)); }
    else if (k === "j" || k === "ArrowRight") { go(state.current + 1); }
    else if (k === "k" || k === "ArrowLeft") { go(state.current - 1); }
    else if (k === "Enter") { nextUndecided(); }
    else if (k === "a") { act("accept"); }
    else if (k === "v") { act("confirm"); }
    else if (k === "x") { act("clear"); }
    else if (k === "s") { act("split"); }
    else if (k === "u") { act("undo"); }
    else if (k === "m") { var note = document.getElementById("note"); if (note) { note.focus(); } }
    else if (k === "e") { exportAs("yaml"); }
    else if (k === "?") { var h = document.getElementById("help"); h.hidden = !h.hidden; }
    else { return; }
    ev.preventDefault();
  });

  render();
  document.body.setAttribute("data-ready", "1");
  window.reviewReadyAt = performance.now();
})();
