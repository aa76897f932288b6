// The Logs tab: each node's log and the output files, followed live, searchable, and
// downloadable one by one (exact bytes) or all at once (zip).
import { api, el } from "./console.js";

// The page keeps at most this much of a log on screen (the download has all of it).
const MAX_CHARS = 4 << 20;
// New log text is put on screen at most this often (one layout for many events).
const FLUSH_MS = 100;
// Logs not there yet are looked for again this often.
const SOURCES_RETRY_MS = 3000;

// One flushed piece of a log: a block the browser lays out only while it is on screen.
function block(text) {
  return el("div", { class: "chunk", text });
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export async function showLogs(panel, job) {
  const base = `/api/jobs/${encodeURIComponent(job.key)}`;
  const sources = await api(`${base}/logs`);
  let stream = null;
  // What is on screen: pieces of text in arrival order (one text node each while no search
  // is shown), their total length, and whether older pieces were dropped.
  let pieces = [];
  let total = 0;
  let cut = false;
  // What came since the last flush: shown together, at most every FLUSH_MS.
  let incoming = [];
  let bytes = 0;
  let flushTimer = null;
  const view = el("pre", { id: "log-view", "data-bytes": "0" });
  const search = el("input", { id: "log-search", type: "search", placeholder: "search", size: 24 });
  const only = el("input", { type: "checkbox", id: "log-only" });
  const status = el("span", { class: "muted", id: "log-status" });
  const download = el("a", { id: "log-download", text: "Download this log" });
  const list = el("div", { class: "actions", id: "log-sources" });

  function render() {
    const needle = search.value;
    const text = pieces.join("");
    if (!needle) {
      view.replaceChildren(...pieces.map(block));
      return;
    }
    const pattern = new RegExp(escapeRegExp(needle), "gi");
    const lines = text.split("\n");
    const shown = only.checked ? lines.filter((line) => line.search(pattern) >= 0) : lines;
    const fragment = document.createDocumentFragment();
    let matches = 0;
    for (const line of shown) {
      let last = 0;
      for (const found of line.matchAll(pattern)) {
        fragment.append(line.slice(last, found.index), el("mark", { text: found[0] }));
        last = found.index + found[0].length;
        matches += 1;
      }
      fragment.append(line.slice(last) + "\n");
    }
    view.replaceChildren(fragment);
    status.textContent = `${matches} match(es)`;
  }

  // Whole lines go on screen (a block each); a line still being written waits for its end
  // (or for the log's end: ``all``).
  function flush(all = false) {
    flushTimer = null;
    const joined = incoming.join("");
    const cutAt = all ? joined.length : joined.lastIndexOf("\n") + 1;
    const piece = joined.slice(0, cutAt);
    incoming = cutAt < joined.length ? [joined.slice(cutAt)] : [];
    if (!piece) return;
    const atBottom = view.scrollTop + view.clientHeight >= view.scrollHeight - 4;
    pieces.push(piece);
    total += piece.length;
    let dropped = 0;
    while (total > MAX_CHARS && pieces.length > 1) {
      total -= pieces.shift().length;
      dropped += 1;
    }
    cut = cut || dropped > 0;
    if (search.value) render();
    else {
      for (let i = 0; i < dropped; i++) view.firstElementChild.remove();
      view.append(block(piece));
    }
    view.dataset.bytes = String(bytes);
    if (cut) status.textContent = `showing the last ${MAX_CHARS >> 20} MiB; download for all of it`;
    if (atBottom) view.scrollTop = view.scrollHeight;
  }

  function open(source) {
    if (stream) stream.close();
    clearTimeout(flushTimer);
    flushTimer = null;
    pieces = []; total = 0; cut = false; incoming = []; bytes = 0;
    view.textContent = "";
    view.dataset.bytes = "0";
    view.dataset.key = source.key;
    delete view.dataset.ended;
    for (const b of list.children) b.classList.toggle("primary", b.dataset.key === source.key);
    download.href = `${base}/logs/${encodeURIComponent(source.key)}`;
    status.textContent = `following ${source.origin}`;
    stream = new EventSource(`${base}/logs/${encodeURIComponent(source.key)}/live`);
    stream.onmessage = (event) => {
      const message = JSON.parse(event.data);
      incoming.push(message.text);
      bytes = message.offset + message.bytes;
      if (flushTimer === null) flushTimer = setTimeout(flush, FLUSH_MS);
    };
    stream.addEventListener("end", (event) => {
      const message = JSON.parse(event.data);
      clearTimeout(flushTimer);
      flush(true);
      view.dataset.ended = "1";
      status.textContent = `complete: ${message.offset} bytes` +
        (cut ? ` (the last ${MAX_CHARS >> 20} MiB shown; download for all of it)` : "");
      stream.close();
    });
    stream.onerror = () => { if (!view.dataset.ended) status.textContent = "the log stream broke"; };
  }

  // One button per log; a log not there yet (a pod still starting) is looked for again.
  const buttons = new Map();
  function showSources(found) {
    for (const source of found) {
      let button = buttons.get(source.key);
      if (!button) {
        button = el("button", { "data-key": source.key, text: source.title });
        buttons.set(source.key, button);
        list.append(button);
      }
      button.onclick = () => open(source);
      button.title = source.available ? source.origin : source.why;
      button.disabled = !source.available;
    }
  }
  showSources(sources);
  let retry = null;
  if (sources.some((s) => !s.available)) {
    retry = setInterval(async () => {
      try {
        const found = await api(`${base}/logs`);
        showSources(found);
        if (!stream) { const first = found.find((s) => s.available); if (first) open(first); }
        if (found.every((s) => s.available)) { clearInterval(retry); retry = null; }
      } catch (e) { /* the next round tries again */ }
    }, SOURCES_RETRY_MS);
  }
  search.addEventListener("input", render);
  only.addEventListener("change", render);
  panel.append(list, el("div", { class: "logbar" }, search,
    el("label", {}, only, " matching lines only"), download,
    el("a", { id: "logs-zip", href: `${base}/logs.zip`, text: "Download all (zip)" }), status), view);
  const first = sources.find((s) => s.available);
  if (first) open(first);
  else status.textContent = "no log yet";
  return () => { if (retry) clearInterval(retry); if (stream) stream.close(); };
}
