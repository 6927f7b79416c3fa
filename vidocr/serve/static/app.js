// vidocr serve: search, watch the moment, proofread. Plain DOM; no build step, no framework, no cookies.
"use strict";

const $ = (sel) => document.querySelector(sel);
const API = "/api/v1";
const state = { key: sessionStorage.getItem("vidocr-key") || "", video: null, cues: [], fps: 25,
                proof: null, selected: 0, dirty: false, baseRevision: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function status(text) { $("#status").textContent = text || ""; }

async function api(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (state.key) headers.Authorization = "Bearer " + state.key;
  if (options.json !== undefined) { headers["Content-Type"] = "application/json"; options.body = JSON.stringify(options.json); }
  const resp = await fetch(API + path, { method: options.method || "GET", headers, body: options.body, credentials: "omit" });
  if (!resp.ok) {
    let message = resp.status + " " + resp.statusText;
    try { message = (await resp.json()).error || message; } catch (e) { /* not JSON */ }
    if (resp.status === 401) $("#key-box").open = true;
    throw new Error(message);
  }
  return options.raw ? resp : resp.json();
}

function clock(ms) {
  const s = Math.max(0, ms) / 1000, h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return (h ? h + ":" : "") + String(m).padStart(2, "0") + ":" + (s % 60).toFixed(3).padStart(6, "0");
}

function mpvAt(line, ms) {  // the server's mpv line (at 0) starting at ms: --start=HH:MM:SS.mmm
  const t = Math.max(0, Math.round(ms)), p2 = (n) => String(n).padStart(2, "0");
  const at = `${p2(Math.floor(t / 3600000))}:${p2(Math.floor(t / 60000) % 60)}:${p2(Math.floor(t / 1000) % 60)}.` +
             String(t % 1000).padStart(3, "0");
  return line.replace("--start=00:00:00.000", "--start=" + at);
}

function highlighted(text, spans) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const [a, b] of spans) {
    if (a > at) frag.append(text.slice(at, a));
    frag.append(el("mark", {}, text.slice(a, b)));
    at = b;
  }
  frag.append(text.slice(at));
  return frag;
}

function show(id) {
  for (const s of ["#results", "#player-view", "#proof-view", "#ab-view", "#jobs-view"]) $(s).hidden = s !== id;
  if (id !== "#jobs-view") clearTimeout(state.jobsTimer);
  for (const v of ["#video", "#proof-video"]) if ("#" + v.slice(1) !== id) $(v).pause();
}

function media(videoId, token, path) {
  return `${API}/videos/${videoId}/${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`;
}

// --- search -----------------------------------------------------------------------------------------------------

async function runSearch(q) {
  $("#q").value = q;
  show("#results");
  const box = $("#results");
  box.replaceChildren();
  if (!q) return;
  status("searching…");
  let data;
  try { data = await api("/search?limit=100&q=" + encodeURIComponent(q)); } catch (e) { status(e.message); return; }
  status(`${data.hits.length}${data.more ? "+" : ""} hits in ${(data.seconds * 1000).toFixed(0)} ms` +
         (data.windowed ? " (ranked among the newest matches)" : ""));
  const groups = new Map();
  for (const hit of data.hits) {
    if (!groups.has(hit.video_id)) groups.set(hit.video_id, []);
    groups.get(hit.video_id).push(hit);
  }
  for (const [videoId, hits] of groups) {
    const group = el("div", { class: "video-group" }, el("h3", {}, hits[0].path));
    hits.sort((a, b) => a.start_ms - b.start_ms);
    for (const hit of hits) {
      const mid = Math.floor((hit.start_ms + hit.end_ms) / 2);
      const row = el("div", { class: "hit", tabindex: "0", "data-video": videoId, "data-ms": hit.start_ms },
        el("img", { src: `${API}/cues/${hit.cue_id}/band?token=${encodeURIComponent(hit.media_token)}`,
                    alt: "band at " + clock(mid), loading: "lazy" }),
        el("span", { class: "time" }, clock(hit.start_ms)), " ",
        el("span", { class: "text" }, highlighted(hit.text, hit.spans)));
      const go = () => { location.hash = `#/video/${videoId}?t=${hit.start_ms}`; };
      row.addEventListener("click", go);
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
      group.append(row);
    }
    box.append(group);
  }
}

// --- player -----------------------------------------------------------------------------------------------------

async function loadVideo(id) {
  if (state.video && state.video.id === id) return state.video;
  const [meta, cues] = await Promise.all([api(`/videos/${id}`), api(`/videos/${id}/cues`)]);
  state.video = meta;
  state.cues = cues.cues;
  state.baseRevision = cues.latest_edit;
  state.fps = meta.probe.fps || 25;
  return meta;
}

function setSource(video, meta, at, onFail) {
  const playable = meta.probe.playable && video.canPlayType(meta.probe.mime) !== "";
  if (!playable) { video.removeAttribute("src"); video.load(); onFail(); return; }  // not the last video's
  video.onerror = onFail;
  video.addEventListener("loadedmetadata", () => { video.currentTime = at / 1000; }, { once: true });
  video.src = media(meta.id, meta.media_token, "stream");
}

async function openPlayer(id, at) {
  show("#player-view");
  let meta;
  try { meta = await loadVideo(id); } catch (e) { status(e.message); return; }
  status("");
  $("#video-title").textContent = meta.path;
  $("#mpv-line").textContent = mpvAt(meta.mpv, at);
  $("#proof-link").href = `#/proof/${id}`;
  const cant = $("#cannot-play");
  cant.hidden = true;
  const video = $("#video");
  setSource(video, meta, at, () => {
    cant.hidden = false;
    cant.textContent = `This browser cannot play ${meta.probe.codec} in ${meta.name}. Play it with: ${mpvAt(meta.mpv, at)}`;
  });
  const list = $("#cue-list");
  list.replaceChildren(...state.cues.map((c) => el("li", { "data-start": c.start_ms, "data-end": c.end_ms,
    onclick: () => { video.currentTime = c.start_ms / 1000; video.play().catch(() => {}); } },
    el("span", { class: "time" }, clock(c.start_ms)), " ", c.text)));
  video.ontimeupdate = () => follow(list, video.currentTime * 1000);
  video.play().catch(() => {});
}

function follow(list, ms) {
  let active = null;
  for (const li of list.children) {
    const on = ms >= +li.dataset.start && ms < +li.dataset.end;
    li.classList.toggle("active", on);
    if (on) active = li;
  }
  if (active && active !== list.lastActive) { active.scrollIntoView({ block: "nearest" }); list.lastActive = active; }
}

// --- proofreading -----------------------------------------------------------------------------------------------

function frameMs() { return 1000 / state.fps; }
function snap(ms) { const f = frameMs(); return Math.max(0, Math.round(Math.round(ms / f) * f)); }

async function openProof(id) {
  show("#proof-view");
  let meta;
  try { state.video = null; meta = await loadVideo(id); } catch (e) { status(e.message); return; }
  status("");
  state.proof = state.cues.map((c) => Object.assign({}, c));
  state.selected = 0;
  setDirty(false);
  $("#proof-title").textContent = meta.path;
  const note = $("#proof-note");
  note.textContent = meta.revisions.ocr_is_newer
    ? "A newer extraction exists than your last edit; your edit is shown. "
    : meta.revisions.edited ? "Showing your latest edit (the OCR output is kept)." : "Showing the OCR output.";
  if (meta.revisions.ocr_is_newer) {
    note.append(el("button", { type: "button", id: "load-ocr", onclick: async () => {
      const r = await api(`/videos/${id}/revisions/${meta.revisions.latest_ocr}`);
      state.proof = r.cues.map((c) => Object.assign({}, c));
      setDirty(true); renderProof();
      status("newest extraction loaded: save to keep it as your edit");
    } }, "Load the newest extraction"));
  }
  await fillRevisions(id);
  setSource($("#proof-video"), meta, 0, () => { $("#proof-note").textContent = "This browser cannot play it: " + meta.mpv; });
  renderProof();
}

function order() {
  const idx = state.proof.map((c, i) => i);
  if (!$("#by-time").checked) idx.sort((a, b) => (conf(state.proof[a]) - conf(state.proof[b])) || a - b);
  return idx;
}
function conf(c) { return c.confidence === null || c.confidence === undefined ? 1 : c.confidence; }

function renderProof() {
  const meta = state.video, list = $("#proof-list");
  state.proof.sort((a, b) => a.start_ms - b.start_ms || a.end_ms - b.end_ms);
  const rows = order().map((i) => {
    const c = state.proof[i];
    const mid = Math.floor((c.start_ms + c.end_ms) / 2);
    const band = c.box ? `band?ms=${mid}&y=${c.box[1]}&h=${c.box[3]}` : `band?ms=${mid}`;
    const text = el("textarea", { "aria-label": "cue text", rows: "2" });
    text.value = c.text;
    text.addEventListener("input", () => { c.text = text.value; setDirty(true); });
    text.addEventListener("focus", () => select(i, false));
    const times = el("span", { class: "time" }, `${clock(c.start_ms)} → ${clock(c.end_ms)}`);
    const b = (label, title, fn) => el("button", { type: "button", title, onclick: () => { select(i, false); fn(); } }, label);
    return el("li", { class: (conf(c) < 0.9 ? "low " : "") + (i === state.selected ? "selected" : ""), "data-index": i },
      el("img", { src: media(meta.id, meta.media_token, band), alt: "band at " + clock(mid), loading: "lazy" }),
      el("div", {}, text,
        el("div", { class: "row" }, times,
          c.confidence !== null && c.confidence !== undefined ? el("span", { class: "time" }, ` conf ${c.confidence.toFixed(2)}`) : ""),
        el("div", { class: "row" },
          b("start −1f", "Alt+[", () => nudge("start_ms", -1)), b("start +1f", "Alt+]", () => nudge("start_ms", 1)),
          b("start = playing", "Alt+S", () => setToPlaying("start_ms")),
          b("end −1f", "Alt+,", () => nudge("end_ms", -1)), b("end +1f", "Alt+.", () => nudge("end_ms", 1)),
          b("end = playing", "Alt+E", () => setToPlaying("end_ms")),
          b("play", "Alt+P", playSelected), b("split", "Alt+Enter", split), b("merge next", "Alt+M", merge),
          b("delete", "Alt+Backspace", remove))));
  });
  list.replaceChildren(...rows);
}

function select(i, focus = true) {
  state.selected = i;
  for (const li of $("#proof-list").children) li.classList.toggle("selected", +li.dataset.index === i);
  if (focus) { const li = $(`#proof-list li[data-index="${i}"] textarea`); if (li) li.focus(); }
}

function current() { return state.proof[state.selected]; }
function setDirty(d) { state.dirty = d; document.body.classList.toggle("dirty", d); }
function changed() { setDirty(true); renderProof(); select(state.proof.indexOf(sel), true); }
let sel = null;
function keep() { sel = current(); }

function nudge(field, frames) {
  keep();
  const c = current();
  const v = snap(c[field] + frames * frameMs());
  if (field === "start_ms" ? v < c.end_ms : v > c.start_ms) c[field] = v;
  changed();
}
function setToPlaying(field) {
  keep();
  const c = current(), v = snap($("#proof-video").currentTime * 1000);
  if (field === "start_ms" ? v < c.end_ms : v > c.start_ms) c[field] = v;
  changed();
}
function playSelected() {
  const v = $("#proof-video"), c = current();
  v.currentTime = c.start_ms / 1000;
  v.play().catch(() => {});
  const stop = () => { if (v.currentTime * 1000 >= c.end_ms) { v.pause(); v.removeEventListener("timeupdate", stop); } };
  v.addEventListener("timeupdate", stop);
}
function split() {
  keep();
  const c = current(), ta = $(`#proof-list li[data-index="${state.selected}"] textarea`);
  const at = ta ? ta.selectionStart : Math.floor(c.text.length / 2);
  const playing = snap($("#proof-video").currentTime * 1000);
  const cut = playing > c.start_ms && playing < c.end_ms ? playing : snap((c.start_ms + c.end_ms) / 2);
  const first = c.text.slice(0, at).trim() || c.text, second = c.text.slice(at).trim() || c.text;
  const next = Object.assign({}, c, { id: null, start_ms: cut, text: second });
  c.end_ms = cut; c.text = first;
  state.proof.splice(state.proof.indexOf(c) + 1, 0, next);
  changed();
}
function merge() {
  keep();
  const c = current(), i = state.proof.indexOf(c), n = state.proof[i + 1];
  if (!n) return;
  c.end_ms = Math.max(c.end_ms, n.end_ms); c.text = c.text + "\n" + n.text;
  state.proof.splice(i + 1, 1);
  changed();
}
function remove() {
  const i = state.selected;
  state.proof.splice(i, 1);
  state.selected = Math.min(i, state.proof.length - 1);
  sel = state.proof[state.selected];
  setDirty(true); renderProof();
}

async function save() {
  const body = { cues: state.proof.map((c) => ({ start_ms: c.start_ms, end_ms: c.end_ms, text: c.text,
                                                 confidence: c.confidence, box: c.box })),
                 base_revision: state.baseRevision };
  try {
    const r = await api(`/videos/${state.video.id}/cues`, { method: "PUT", json: body });
    state.baseRevision = r.revision;
    state.cues = r.cues;
    state.proof = r.cues.map((c) => Object.assign({}, c));
    setDirty(false);
    renderProof();
    status(`saved as revision ${r.revision}`);
    await fillRevisions(state.video.id);
    return true;
  } catch (e) { status("not saved: " + e.message); return false; }
}

async function exportAs(fmt) {
  if (state.dirty && !(await save())) return;
  try {
    const r = await api(`/videos/${state.video.id}/export`, { method: "POST", json: { format: fmt } });
    status(`exported ${r.path} (${r.bytes} bytes)`);
  } catch (e) { status("not exported: " + e.message); }
}

async function download(fmt) {
  try {
    const resp = await api(`/videos/${state.video.id}/subtitles.${fmt}?download=1`, { raw: true });
    const url = URL.createObjectURL(await resp.blob());
    const name = state.video.name.replace(/\.[^.]+$/, "") + "." + fmt;
    const a = el("a", { href: url, download: name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (e) { status(e.message); }
}

function proofKeys(e) {
  if ($("#proof-view").hidden) return;
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") { e.preventDefault(); save(); return; }
  if (!e.altKey || !state.proof || !state.proof.length) return;
  const keys = { BracketLeft: () => nudge("start_ms", -1), BracketRight: () => nudge("start_ms", 1),
    Comma: () => nudge("end_ms", -1), Period: () => nudge("end_ms", 1), KeyS: () => setToPlaying("start_ms"),
    KeyE: () => setToPlaying("end_ms"), KeyP: playSelected, Enter: split, KeyM: merge, Backspace: remove,
    KeyJ: () => step(1), KeyK: () => step(-1) };
  const fn = keys[e.code];
  if (fn) { e.preventDefault(); fn(); }
}
function step(d) {
  const idx = order(), at = idx.indexOf(state.selected);
  const next = idx[Math.min(idx.length - 1, Math.max(0, at + d))];
  if (next !== undefined) select(next, true);
}

// --- A/B: two versions side by side -------------------------------------------------------------------------------

async function fillRevisions(id) {
  const revs = (await api(`/videos/${id}/revisions`)).revisions;
  const options = [["0", "shown now"], ...revs.map((r) => [String(r.id),
    `${r.kind === "ocr" ? `extraction ${r.id}${r.engine ? ` by ${r.engine}` : ""}` : `edit ${r.id}`}`
    + ` (${new Date(r.created_at * 1000).toLocaleString()})`])];
  for (const [sel, pick] of [["#rev-a", "0"], ["#rev-b", revs.length ? String(revs[revs.length - 1].id) : "0"]]) {
    $(sel).replaceChildren(...options.map(([v, label]) => el("option", { value: v }, label)));
    $(sel).value = pick;
  }
  const ocr = revs.filter((r) => r.kind === "ocr");
  if (ocr.length) $("#rev-b").value = String(ocr[ocr.length - 1].id);
}

function wordDiff(mine, other) {  // words of `mine` not in the longest common subsequence with `other` are marked
  const a = mine.split(/(\s+)/), b = other.split(/(\s+)/);
  const n = a.length, m = b.length, L = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const frag = document.createDocumentFragment();
  let i = 0, j = 0;
  while (i < n) {
    if (j < m && a[i] === b[j]) { frag.append(a[i]); i++; j++; }
    else if (j < m && L[i][j + 1] >= L[i + 1][j]) j++;
    else { frag.append(/^\s+$/.test(a[i]) ? a[i] : el("mark", {}, a[i])); i++; }
  }
  return frag;
}

async function openAB(id, a, b) {
  show("#ab-view");
  let data;
  try { await loadVideo(id); data = await api(`/videos/${id}/compare?a=${a}&b=${b}`); } catch (e) { status(e.message); return; }
  status("");
  $("#ab-title").textContent = state.video.path;
  $("#ab-a").textContent = a === 0 ? "A: shown now" : `A: revision ${a}`;
  $("#ab-b").textContent = b === 0 ? "B: shown now" : `B: revision ${b}`;
  $("#ab-back").href = `#/proof/${id}`;
  state.ab = data.pairs.map((p) => ({ pair: p, pick: p.a ? "a" : "b" }));
  const body = $("#ab-table tbody");
  body.replaceChildren(...state.ab.map((row, n) => {
    const { a: x, b: y } = row.pair;
    const cell = (side, cue, other) => {
      const td = el("td", { class: "pick" + (row.pick === side ? " chosen" : ""), "data-side": side, "data-row": n,
                            title: "keep this version of the line" }, cue ? wordDiff(cue.text, other ? other.text : "") : "(none)");
      td.addEventListener("click", () => {
        row.pick = side;
        for (const c of td.parentNode.querySelectorAll("td.pick")) c.classList.toggle("chosen", c.dataset.side === side);
      });
      return td;
    };
    const first = x || y;
    return el("tr", { class: row.pair.same ? "same" : "" }, el("td", { class: "time" }, clock(first.start_ms)),
              cell("a", x, y), cell("b", y, x));
  }));
}

async function saveAB() {
  const cues = state.ab.map((r) => r.pair[r.pick]).filter((c) => c)
    .map((c) => ({ start_ms: c.start_ms, end_ms: c.end_ms, text: c.text, confidence: c.confidence, box: c.box }));
  try {
    const r = await api(`/videos/${state.video.id}/cues`, { method: "PUT", json: { cues } });
    state.video = null;
    status(`saved as revision ${r.revision}`);
  } catch (e) { status("not saved: " + e.message); }
}

// --- jobs -------------------------------------------------------------------------------------------------------

async function openJobs() {
  show("#jobs-view");
  clearTimeout(state.jobsTimer);
  let data;
  try { data = await api("/jobs?limit=200"); } catch (e) { status(e.message); return; }
  const c = data.counts;
  status(`${c.pending} pending, ${c.running} running, ${c.done} done, ${c.failed} failed`);
  $("#jobs-table tbody").replaceChildren(...data.jobs.slice().reverse().map((j) => el("tr", { "data-job": j.id },
    el("td", {}, j.id),
    el("td", {}, j.video_id ? el("a", { href: `#/video/${j.video_id}` }, j.path) : j.path),
    el("td", { class: "engine" }, j.engine ? j.engine.label : ""),
    el("td", { class: "state" }, j.state),
    el("td", {}, j.state === "running" ? Math.round(j.progress * 100) + "%" : ""),
    el("td", { class: "error" }, j.error || ""),
    el("td", {}, j.state === "pending" || j.state === "running"
      ? el("button", { type: "button", onclick: () => cancelJob(j.id) }, "cancel") : ""))));
  state.jobsTimer = setTimeout(() => { if (!$("#jobs-view").hidden) openJobs(); }, 2000);
}

async function cancelJob(id) {
  try { await api(`/jobs/${id}`, { method: "DELETE" }); } catch (e) { status(e.message); return; }
  openJobs();
}

async function queuePath(e) {
  e.preventDefault();
  try {
    const body = { path: $("#job-path").value.trim() };
    for (const [key, sel] of [["engine", "#job-engine"], ["profile", "#job-profile"]])
      if ($(sel).value.trim()) body[key] = $(sel).value.trim();
    if ($("#job-server").value.trim()) body.server = [$("#job-server").value.trim()];
    const r = await api("/jobs", { method: "POST", json: body });
    $("#job-path").value = "";
    await openJobs();
    status(`job ${r.job.id}: ${r.queued}`);
  } catch (err) { status("not queued: " + err.message); }
}

async function upload() {
  const file = $("#upload").files[0];
  if (!file) return;
  status(`uploading ${file.name}…`);
  try {
    const r = await api("/uploads?filename=" + encodeURIComponent(file.name),
                        { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
    await openJobs();
    status(`job ${r.job.id}: ${r.queued}`);
  } catch (err) { status("not queued: " + err.message); }
  $("#upload").value = "";
}

// --- routing ----------------------------------------------------------------------------------------------------

function route() {
  const [path, query] = location.hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  let m;
  if ((m = path.match(/^\/video\/(\d+)$/))) openPlayer(+m[1], +(params.get("t") || 0));
  else if ((m = path.match(/^\/proof\/(\d+)$/))) openProof(+m[1]);
  else if (path === "/jobs") openJobs();
  else if ((m = path.match(/^\/ab\/(\d+)$/))) openAB(+m[1], +(params.get("a") || 0), +(params.get("b") || 0));
  else runSearch(params.get("q") || "");
}

document.addEventListener("DOMContentLoaded", () => {
  $("#search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = "#/?q=" + encodeURIComponent($("#q").value);
  });
  $("#key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.key = $("#key").value.trim();
    sessionStorage.setItem("vidocr-key", state.key);
    $("#key").value = "";
    $("#key-box").open = false;
    state.video = null;
    route();
  });
  $("#save").addEventListener("click", save);
  $("#ab-save").addEventListener("click", saveAB);
  $("#job-form").addEventListener("submit", queuePath);
  $("#upload").addEventListener("change", upload);
  $("#compare").addEventListener("click", () => {
    location.hash = `#/ab/${state.video.id}?a=${$("#rev-a").value}&b=${$("#rev-b").value}`;
  });
  $("#by-time").addEventListener("change", renderProof);
  for (const b of document.querySelectorAll("[data-export]")) b.addEventListener("click", () => exportAs(b.dataset.export));
  for (const b of document.querySelectorAll("[data-download]")) b.addEventListener("click", () => download(b.dataset.download));
  document.addEventListener("keydown", proofKeys);
  window.addEventListener("hashchange", route);
  window.addEventListener("beforeunload", (e) => { if (state.dirty) e.preventDefault(); });
  route();
});
