// The Cluster page: sinfo's listing, then each partition's nodes with their allocated and
// idle CPUs and GPUs drawn, and the jobs running on each.
import { api, el, jobLink } from "./console.js";
import { usageBar } from "./charts.js";

const REFRESH_MS = 5000;

function nodeCard(node) {
  return el("div", { class: "node", "data-node": node.name },
    el("h3", { text: `${node.name} · ${node.state}` }),
    usageBar("CPUs", node.alloc_cpus, node.cpus),
    node.gpus ? usageBar("GPUs", node.alloc_gpus, node.gpus) : el("div", { class: "muted", text: "no GPUs" }),
    node.pooled ? el("div", { class: "muted", text: "shares this machine's pool with the other local nodes" }) : "",
    node.reason ? el("div", { class: "error", text: node.reason }) : "",
    el("div", {}, "Jobs: ", ...(node.jobs.length ? node.jobs.flatMap((j) => [jobLink(j), " "]) : ["none"])));
}

export async function show(main) {
  const listing = el("pre", { class: "light", id: "sinfo" });
  const parts = el("div", { id: "partitions" });
  main.append(el("h1", { text: "Cluster" }), el("h2", { text: "sinfo" }), listing, parts);
  async function refresh() {
    const data = await api("/api/cluster");
    listing.textContent = data.sinfo;
    parts.replaceChildren(...data.partitions.map((p) => el("section", { class: "panel" },
      el("h2", { text: `Partition ${p.name}${p.default ? " (default)" : ""} · ${p.avail}` }),
      el("div", { class: "nodes" }, p.nodes.map(nodeCard)))));
  }
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), REFRESH_MS);
  return () => clearInterval(timer);
}
