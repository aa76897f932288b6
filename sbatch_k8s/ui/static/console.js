// The console's shell: the router (#/jobs, #/job/12, #/submit, #/cluster), requests to the
// console's API with its token, the confirmation dialog and the toast. Each page is a
// module exporting show(main, params) and returning a function that stops it (closes its
// live streams) when the page is left.
import * as jobs from "./jobs.js";
import * as job from "./job.js";
import * as submit from "./submit.js";
import * as cluster from "./cluster.js";

const TOKEN = document.querySelector('meta[name="console-token"]').content;
export const session = { identity: null, columns: [] };

export async function api(path, options = {}) {
  const init = { method: options.method || "GET", headers: { "X-Console-Token": TOKEN } };
  if (options.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
  if (!response.ok && !options.allowError) {
    throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function stateBadge(compact, long) {
  return el("span", { class: `st st-${compact}`, title: long, text: compact });
}

export function unavailable(value) {
  return el("div", { class: "unavailable", text: `Not available: ${value.why}` });
}

export function jobLink(key) {
  return el("a", { href: `#/job/${encodeURIComponent(key)}`, text: key });
}

export function when(epoch) {
  if (!epoch) return "";
  const d = new Date(epoch * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// The confirmation every action asks for; resolves true when confirmed.
export function confirmAction(title, text, detail) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  const pre = document.getElementById("confirm-detail");
  pre.hidden = !detail;
  pre.textContent = detail || "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.showModal();
  });
}

let toastTimer = null;
export function toast(message, bad = false) {
  const node = document.getElementById("toast");
  node.textContent = message;
  node.className = bad ? "bad" : "";
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, bad ? 15000 : 5000);
}

const PAGES = { jobs, job, submit, cluster };
let stopPage = null;
let routed = 0;             // which route() is the latest

// Show the page the location's hash names. Each page gets a fresh container: a hash that
// changes again while a page is still loading (a hashchange while start() routes, a quick
// click) leaves the earlier page detached, and it is stopped as soon as it has loaded.
async function route() {
  if (stopPage) { stopPage(); stopPage = null; }
  const mine = ++routed;
  const [name, ...rest] = (location.hash.replace(/^#\/?/, "") || "jobs").split("/");
  const page = PAGES[name] || jobs;
  for (const link of document.querySelectorAll("header nav a")) {
    link.classList.toggle("active", link.dataset.page === name ||
      (name === "job" && link.dataset.page === "jobs"));
  }
  const view = el("div");
  document.getElementById("page").replaceChildren(view);
  let stop = null;
  try {
    stop = await page.show(view, rest.map(decodeURIComponent)) || null;
  } catch (e) {
    view.append(el("p", { class: "error", text: e.message }));
  }
  if (mine === routed) stopPage = stop;
  else if (stop) stop();
}

async function start() {
  const data = await api("/api/session");
  session.identity = data.identity;
  session.columns = data.columns;
  const me = data.identity;
  document.getElementById("who").textContent =
    `${me.user}${me.operator ? " (operator)" : ""} · ${me.backend} · ${me.cluster}`;
  window.addEventListener("hashchange", route);
  await route();
}

start().catch((e) => {
  document.getElementById("page").append(el("p", { class: "error", text: e.message }));
});
