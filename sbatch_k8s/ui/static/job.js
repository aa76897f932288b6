// A job's page: state and why it waits, actions (each confirmed), nodes, steps,
// dependencies, and tabs for logs (live, searchable, downloadable), events, YAML, the
// script and resource charts. The record is read again every few seconds.
import { api, el, stateBadge, jobLink, when, confirmAction, toast, unavailable } from "./console.js";
import { showLogs } from "./logs.js";
import { drawSamples } from "./charts.js";

const REFRESH_MS = 2000;

function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [key, value] of pairs) dl.append(el("dt", { text: key }), el("dd", {}, value));
  return dl;
}

function dependencyLinks(job) {
  if (!job.dependency) return "none";
  const span = el("span", {}, job.dependency, " ");
  for (const id of job.depends_on) span.append(jobLink(String(id)), " ");
  return span;
}

async function act(job, action, title, text, body = {}) {
  let detail = null;
  if (action === "resubmit") {
    const plan = await api(`/api/jobs/${encodeURIComponent(job.key)}/resubmission`);
    if (!plan.available) { toast(plan.why, true); return; }
    detail = plan.command;
  }
  if (!await confirmAction(title, text, detail)) return;
  const result = await api(`/api/jobs/${encodeURIComponent(job.key)}/${action}`,
    { method: "POST", body });
  const said = document.getElementById("action-result");
  if (result.ok) {
    const what = result.job_id ? `Submitted batch job ${result.job_id}` : `${title}: done`;
    said.className = "ok"; said.textContent = what; toast(what);
    if (result.job_id) location.hash = `#/job/${result.job_id}`;
  } else {
    const message = result.message || result.stderr || "refused";
    said.className = "error"; said.textContent = message; toast(message, true);
  }
}

function actionButtons(job) {
  const a = job.actions;
  const bar = el("div", { class: "actions", id: "actions" });
  const add = (show, id, label, handler, danger) => {
    if (show) bar.append(el("button", { id, class: danger ? "danger" : null, onclick: handler, text: label }));
  };
  add(a.cancel, "act-cancel", job.array_job_id !== null ? "Cancel element" : "Cancel job",
    () => act(job, "cancel", "Cancel", `Cancel job ${job.key} (${job.name})?`), true);
  add(a.cancel && job.array_job_id !== null, "act-cancel-array", "Cancel whole array",
    () => act(job, "cancel", "Cancel array", `Cancel every element of array ${job.array_job_id}?`,
      { whole_array: true }), true);
  add(a.hold, "act-hold", "Hold", () => act(job, "hold", "Hold", `Hold job ${job.key}?`));
  add(a.release, "act-release", "Release", () => act(job, "release", "Release", `Release job ${job.key}?`));
  add(a.requeue, "act-requeue", "Requeue",
    () => act(job, "requeue", "Requeue", `Requeue job ${job.key}: run it again under its id?`));
  add(a.resubmit, "act-resubmit", "Submit again",
    () => act(job, "resubmit", "Submit again", "Submit this script again with its options?"));
  return bar;
}

function stepsTable(job) {
  if (!job.steps.length) return el("p", { class: "muted", text: "No steps recorded yet." });
  const body = el("tbody");
  for (const step of job.steps) {
    const cancel = step.cancellable ? el("button", { class: "danger", text: "Cancel step",
      onclick: () => act(job, "cancel", "Cancel step", `Cancel step ${step.id}?`, { step: step.step }) }) : "";
    body.append(el("tr", { "data-step": step.step },
      el("td", { text: step.id }), el("td", { text: step.name }),
      el("td", {}, step.st ? stateBadge(step.st, step.state) : "", " ", step.state),
      el("td", { text: step.exit }), el("td", { text: step.nodes }),
      el("td", { text: when(step.start) }), el("td", { text: when(step.end) }), el("td", {}, cancel)));
  }
  return el("table", { id: "steps" }, el("thead", {}, el("tr", {},
    ["STEP", "NAME", "STATE", "EXIT", "NODES", "START", "END", ""].map((t) => el("th", { text: t })))), body);
}

async function nodesTable(job) {
  const nodes = await api(`/api/jobs/${encodeURIComponent(job.key)}/nodes`);
  if (!nodes.length) return el("p", { class: "muted", text: "No nodes allocated yet." });
  return el("table", { id: "nodes" }, el("thead", {}, el("tr", {},
    ["NODE", "NAME", "STATE", "WHERE", "HOST", "RESTARTS", "DETAIL"].map((t) => el("th", { text: t })))),
  el("tbody", {}, nodes.map((n) => el("tr", {}, el("td", { text: n.index }), el("td", { text: n.name }),
    el("td", { text: n.state }), el("td", { text: n.where }), el("td", { text: n.host }),
    el("td", { text: n.restarts }), el("td", { text: n.detail }))))); 
}

async function overview(job) {
  const box = el("div", { id: "overview" });
  box.append(el("div", { class: "grid2" },
    el("div", { class: "panel" }, kv([
      ["User", job.user], ["Partition", job.partition], ["Nodes", `${job.node_count} ${job.node_list}`],
      ["Submitted", when(job.submit_time)], ["Started", when(job.start_time)],
      ["Ended", when(job.end_time)], ["Exit code", job.exit], ["Work dir", job.work_dir],
      ["Dependency", dependencyLinks(job)]])),
    el("div", { class: "panel" }, el("h2", { text: "Nodes" }), await nodesTable(job))));
  box.append(el("div", { class: "panel" }, el("h2", { text: "Steps" }), stepsTable(job)));
  box.append(el("details", {}, el("summary", { text: "scontrol show job" }),
    el("pre", { class: "light", id: "scontrol", text: job.scontrol })));
  return box;
}

async function textTab(path, id) {
  const data = await api(path);
  return data.available ? el("pre", { id, text: data.text }) : unavailable(data);
}

async function eventsTab(job) {
  const data = await api(`/api/jobs/${encodeURIComponent(job.key)}/events`);
  const rows = data.events.map((e) => el("tr", { class: e.type === "Warning" ? "error" : null },
    el("td", { text: when(e.time) }), el("td", { text: e.type }), el("td", { text: e.reason }),
    el("td", { text: e.subject }), el("td", { text: e.message }),
    el("td", { class: "muted", text: e.source + (e.count > 1 ? ` ×${e.count}` : "") })));
  return el("div", {}, el("table", { id: "events" }, el("thead", {}, el("tr", {},
    ["TIME", "TYPE", "REASON", "OBJECT", "MESSAGE", "SOURCE"].map((t) => el("th", { text: t })))),
  el("tbody", {}, rows)));
}

// Each look at a job's samples lets the console add a point per node with new figures.
const samplesOf = (job) => api(`/api/jobs/${encodeURIComponent(job.key)}/samples`);
const samplesView = (data) => (data.available === false ? unavailable(data) : drawSamples(data));

async function resourcesTab(job) {
  return samplesView(await samplesOf(job));
}

const TABS = [
  ["overview", "Overview", overview],
  ["logs", "Logs", null],
  ["events", "Events", eventsTab],
  ["yaml", "YAML", (job) => textTab(`/api/jobs/${encodeURIComponent(job.key)}/yaml`, "yaml")],
  ["script", "Script", (job) => textTab(`/api/jobs/${encodeURIComponent(job.key)}/script`, "script")],
  ["resources", "Resources", resourcesTab],
];

export async function show(main, [key, tab]) {
  let job = await api(`/api/jobs/${encodeURIComponent(key)}`);
  let current = tab || "overview";
  let stopLogs = null;
  const title = el("h1", { id: "job-title" });
  const waits = el("div", { id: "pending" });
  const said = el("p", { id: "action-result" });
  const buttons = el("div");
  const tabs = el("div", { class: "tabs", id: "tabs" });
  const body = el("div", { id: "tab-body" });

  function header() {
    title.replaceChildren(`Job ${job.key} · ${job.name} `, stateBadge(job.st, job.state),
      ` ${job.state}${job.reason && job.reason !== "None" ? ` (${job.reason})` : ""}`);
    waits.replaceChildren(...(job.pending ? [el("div", { class: "notice", text: job.pending })] : []),
      ...(job.comment ? [el("div", { class: "error", text: job.comment })] : []));
    buttons.replaceChildren(actionButtons(job));
  }

  let opened = 0;             // which open() is the latest: a slower earlier one yields
  async function open(name) {
    current = name;
    const mine = ++opened;
    if (stopLogs) { stopLogs(); stopLogs = null; }
    for (const b of tabs.children) b.classList.toggle("active", b.dataset.tab === name);
    body.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
    try {
      if (name === "logs") {
        const panel = el("div");
        body.replaceChildren(panel);
        const stop = await showLogs(panel, job);
        if (mine !== opened) stop(); else stopLogs = stop;
      } else {
        const [, , render] = TABS.find(([n]) => n === name);
        const shown = await render(job);
        if (mine === opened) body.replaceChildren(shown);
      }
    } catch (e) {
      if (mine === opened) body.replaceChildren(el("p", { class: "error", text: e.message }));
    }
  }

  for (const [name, label] of TABS) {
    tabs.append(el("button", { "data-tab": name, id: `tab-${name}`, text: label, onclick: () => open(name) }));
  }
  main.append(title, waits, buttons, said, tabs, body);
  header();
  await open(current);

  const timer = setInterval(async () => {
    try {
      const fresh = await api(`/api/jobs/${encodeURIComponent(key)}`);
      const changed = JSON.stringify(fresh) !== JSON.stringify(job);
      job = fresh;
      if (current === "resources" || job.state === "RUNNING") {
        // look while the page is open, on any tab: the charts then have the whole time
        const before = opened;
        const data = await samplesOf(job);
        if (current === "resources" && before === opened) body.replaceChildren(samplesView(data));
      }
      if (changed) {
        header();
        if (current === "overview") {
          const before = opened;
          const shown = await overview(job);
          // the user may have opened another tab meanwhile: then this is stale
          if (current === "overview" && before === opened) body.replaceChildren(shown);
        }
      }
    } catch (e) { /* the next round tries again */ }
  }, REFRESH_MS);
  return () => { clearInterval(timer); if (stopLogs) stopLogs(); };
}
