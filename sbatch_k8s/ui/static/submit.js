// The Submit page: paste or upload a script, choose partition and options, see
// sbatch --k8s-lint's report as you type, then submit with sbatch itself.
import { session, api, el, jobLink } from "./console.js";

const LINT_DELAY_MS = 400;
export const prefill = { script: "", scriptName: "", options: "", workDir: "" };

function quoted(value) {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

export function show(main) {
  const me = session.identity;
  const script = el("textarea", { class: "script", id: "script", spellcheck: "false",
    placeholder: "#!/bin/bash\n#SBATCH --nodes=2\nsrun hostname" });
  script.value = prefill.script;
  const upload = el("input", { type: "file", id: "upload" });
  const name = el("input", { id: "script-name", placeholder: "job.sh", value: prefill.scriptName, size: 14 });
  const partition = el("select", { id: "partition" }, el("option", { value: "", text: "(default)" }),
    me.partitions.map((p) => el("option", { value: p, text: p + (p === me.default_partition ? " (default)" : "") })));
  const nodes = el("input", { id: "nodes", placeholder: "-N", size: 4 });
  const time = el("input", { id: "time", placeholder: "-t 10:00", size: 8 });
  const jobName = el("input", { id: "job-name", placeholder: "-J", size: 10 });
  const options = el("input", { id: "options", placeholder: "more sbatch options", value: prefill.options, size: 40 });
  const workDir = el("input", { id: "work-dir", value: prefill.workDir || me.work_dir, size: 40 });
  const lint = el("pre", { class: "light", id: "lint", text: "The lint report appears as you type." });
  const result = el("div", { id: "submit-result" });
  const button = el("button", { class: "primary", id: "submit", text: "Submit" });
  Object.assign(prefill, { script: "", scriptName: "", options: "", workDir: "" });

  function optionsText() {
    const words = [];
    if (partition.value) words.push(`--partition=${quoted(partition.value)}`);
    if (nodes.value.trim()) words.push(`--nodes=${quoted(nodes.value.trim())}`);
    if (time.value.trim()) words.push(`--time=${quoted(time.value.trim())}`);
    if (jobName.value.trim()) words.push(`--job-name=${quoted(jobName.value.trim())}`);
    if (options.value.trim()) words.push(options.value.trim());
    return words.join(" ");
  }

  let timer = null, asked = 0;
  function lintSoon() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++asked;
      if (!script.value.trim()) { lint.textContent = "The lint report appears as you type."; return; }
      try {
        const report = await api("/api/lint", { method: "POST", allowError: true,
          body: { script: script.value, options: optionsText() } });
        if (mine !== asked) return;        // a newer request is on its way
        lint.textContent = report.report || report.error;
        lint.dataset.ok = report.ok ? "1" : "0";
        lint.className = report.ok ? "light" : "light error";
      } catch (e) { lint.textContent = e.message; }
    }, LINT_DELAY_MS);
  }

  for (const input of [script, partition, nodes, time, jobName, options]) {
    input.addEventListener("input", lintSoon);
  }
  upload.addEventListener("change", async () => {
    const file = upload.files[0];
    if (!file) return;
    script.value = await file.text();
    name.value = file.name;
    lintSoon();
  });
  button.addEventListener("click", async () => {
    button.disabled = true;
    result.replaceChildren(el("p", { class: "muted", text: "Submitting…" }));
    try {
      const answer = await api("/api/submit", { method: "POST", allowError: true, body: {
        script: script.value, script_name: name.value, options: optionsText(), work_dir: workDir.value } });
      const lines = [];
      if (answer.job_id) lines.push(el("p", { class: "ok" }, "Submitted batch job ", jobLink(String(answer.job_id))));
      const said = (answer.stdout || "") + (answer.stderr || "") + (answer.error || "");
      if (said.trim()) lines.push(el("pre", { class: answer.ok ? "light" : "light error", text: said }));
      result.replaceChildren(...lines);
    } catch (e) {
      result.replaceChildren(el("p", { class: "error", text: e.message }));
    } finally { button.disabled = false; }
  });

  main.append(el("h1", { text: "Submit a batch script" }),
    el("div", { class: "grid2" },
      el("div", { class: "panel" }, el("div", { class: "filters" },
        el("label", {}, "Upload", upload), el("label", {}, "Script name", name)), script),
      el("div", { class: "panel" },
        el("div", { class: "filters" }, el("label", {}, "Partition", partition), el("label", {}, "Nodes", nodes),
          el("label", {}, "Time", time), el("label", {}, "Job name", jobName)),
        el("div", { class: "filters" }, el("label", {}, "Options", options)),
        el("div", { class: "filters" }, el("label", {}, "Working directory", workDir), button),
        result, el("h2", { text: "sbatch --k8s-lint" }), lint)));
  if (script.value) lintSoon();
}
