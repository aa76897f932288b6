// The Logs tab: each node's log and the output files, followed live, searchable, and
// downloadable one by one (exact bytes) or all at once (zip).
import { api, el } from "./console.js";

// The page keeps at most this much of a log on screen (the download has all of it).
const MAX_CHARS = 4 << 20;

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export async function showLogs(panel, job) {
  const base = `/api/jobs/${encodeURIComponent(job.key)}`;
  const sources = await api(`${base}/logs`);
  let stream = null;
  let text = "";
  let cut = 0;
  const view = el("pre", { id: "log-view", "data-bytes": "0" });
  const search = el("input", { id: "log-search", type: "search", placeholder: "search", size: 24 });
  const only = el("input", { type: "checkbox", id: "log-only" });
  const status = el("span", { class: "muted", id: "log-status" });
  const download = el("a", { id: "log-download", text: "Download this log" });
  const list = el("div", { class: "actions", id: "log-sources" });

  function render() {
    const needle = search.value;
    if (!needle) { view.textContent = text; }
    else {
      const pattern = new RegExp(escapeRegExp(needle), "gi");
      const lines = text.split("\n");
      const shown = only.checked ? lines.filter((line) => pattern.test(line)) : lines;
      view.replaceChildren();
      let matches = 0;
      for (const line of shown) {
        let last = 0;
        for (const found of line.matchAll(pattern)) {
          view.append(line.slice(last, found.index), el("mark", { text: found[0] }));
          last = found.index + found[0].length;
          matches += 1;
        }
        view.append(line.slice(last) + "\n");
      }
      status.textContent = `${matches} match(es)`;
    }
  }

  function append(piece) {
    const atBottom = view.scrollTop + view.clientHeight >= view.scrollHeight - 4;
    text += piece;
    if (text.length > MAX_CHARS) { cut += text.length - MAX_CHARS; text = text.slice(-MAX_CHARS); }
    if (search.value || cut) render(); else view.append(piece);
    if (atBottom) view.scrollTop = view.scrollHeight;
  }

  function open(source) {
    if (stream) stream.close();
    text = ""; cut = 0;
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
      append(message.text);
      view.dataset.bytes = String(message.offset + message.bytes);
      if (cut) status.textContent = `showing the last ${MAX_CHARS >> 20} MiB; download for all of it`;
    };
    stream.addEventListener("end", (event) => {
      const message = JSON.parse(event.data);
      view.dataset.ended = "1";
      status.textContent = `complete: ${message.offset} bytes`;
      stream.close();
    });
    stream.onerror = () => { if (!view.dataset.ended) status.textContent = "the log stream broke"; };
  }

  for (const source of sources) {
    const button = el("button", { "data-key": source.key, text: source.title,
      title: source.available ? source.origin : source.why, disabled: !source.available,
      onclick: () => open(source) });
    list.append(button);
  }
  search.addEventListener("input", render);
  only.addEventListener("change", render);
  panel.append(list, el("div", { class: "logbar" }, search,
    el("label", {}, only, " matching lines only"), download,
    el("a", { id: "logs-zip", href: `${base}/logs.zip`, text: "Download all (zip)" }), status), view);
  const first = sources.find((s) => s.available);
  if (first) open(first);
  else status.textContent = "no log yet";
  return () => stream && stream.close();
}
