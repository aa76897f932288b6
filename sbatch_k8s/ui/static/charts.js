// Resource charts as SVG, drawn here (no charting library): one chart per measure, one
// line per node, time along the bottom. Input, as the console's /samples answers:
// { series: [{ node, points: [[epoch, {cpu, rss_mb, gpu, gpu_mem_mb}]] }], notes: [text] }
// (sbatch_k8s/ui/samples.py; a measure no point has draws no chart).
const SVG = "http://www.w3.org/2000/svg";
const MEASURES = [
  ["cpu", "CPU (%)"], ["rss_mb", "Memory (MB)"], ["gpu", "GPU utilisation (%)"],
  ["gpu_mem_mb", "GPU memory (MB)"],
];
const COLOURS = ["#2457c5", "#2f855a", "#b7791f", "#c53030", "#6b46c1", "#319795"];
const WIDTH = 520, HEIGHT = 160, PAD = 34;

function node(tag, attrs = {}) {
  const made = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) made.setAttribute(key, value);
  return made;
}

function clock(epoch) {
  const d = new Date(epoch * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

// One measure's chart, or null when no node has a value for it. A node keeps its colour
// (its place in `series`) in every chart and in the legend.
export function lineChart(title, series, measure) {
  const lines = series.map((s, i) => ({ node: s.node, colour: COLOURS[i % COLOURS.length],
    points: s.points.filter(([, v]) => v[measure] !== undefined && v[measure] !== null)
      .map(([t, v]) => [t, v[measure]]) })).filter((line) => line.points.length);
  if (!lines.length) return null;
  const all = lines.flatMap((line) => line.points);
  const t0 = Math.min(...all.map((p) => p[0])), t1 = Math.max(...all.map((p) => p[0]));
  const top = Math.max(1, ...all.map((p) => p[1]));
  const x = (t) => PAD + (t1 === t0 ? 0 : (t - t0) / (t1 - t0)) * (WIDTH - 2 * PAD);
  const y = (v) => HEIGHT - PAD / 2 - (v / top) * (HEIGHT - PAD);
  const svg = node("svg", { class: "chart", width: WIDTH, height: HEIGHT, "data-measure": measure,
    viewBox: `0 0 ${WIDTH} ${HEIGHT}` });
  const label = node("text", { x: PAD, y: 12 });
  label.textContent = `${title} (max ${top})`;
  svg.append(label, node("line", { x1: PAD, y1: HEIGHT - PAD / 2, x2: WIDTH - PAD,
    y2: HEIGHT - PAD / 2, stroke: "#d9dde3" }));
  const times = t1 === t0 ? [[t0, "start"]] : [[t0, "start"], [t1, "end"]];
  for (const [t, anchor] of times) {
    const tick = node("text", { x: x(t), y: HEIGHT - 3, "text-anchor": anchor });
    tick.textContent = clock(t);
    svg.append(tick);
  }
  for (const line of lines) {
    const path = line.points.map(([t, v], j) => `${j ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    svg.append(node("path", { d: path, fill: "none", stroke: line.colour,
      "stroke-width": 1.5, "data-node": line.node }));
    if (line.points.length === 1) {       // a lone point has no line: a dot shows it
      const [[t, v]] = line.points;
      svg.append(node("circle", { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 2.5,
        fill: line.colour, "data-node": line.node }));
    }
  }
  return svg;
}

export function drawSamples(data) {
  const box = document.createElement("div");
  box.id = "charts";
  const series = data.series || [];
  for (const [measure, title] of MEASURES) {
    const chart = lineChart(title, series, measure);
    if (chart) box.append(chart);
  }
  if (!box.children.length) box.textContent = "No samples yet.";
  else {
    const legend = document.createElement("p");
    legend.id = "chart-nodes";
    series.forEach((s, i) => {
      const item = document.createElement("span");
      item.dataset.node = s.node;
      item.style.color = COLOURS[i % COLOURS.length];
      item.textContent = `\u2014 ${s.node}  `;
      legend.append(item);
    });
    box.append(legend);
  }
  for (const note of data.notes || []) {
    const line = document.createElement("p");
    line.className = "muted";
    line.textContent = note;
    box.append(line);
  }
  return box;
}

// A horizontal bar of used/total, for the Cluster page.
export function usageBar(label, used, total, width = 200) {
  const svg = node("svg", { class: "bar", width, height: 18, "data-used": used, "data-total": total });
  const share = total ? Math.min(1, used / total) : 0;
  svg.append(node("rect", { x: 0, y: 2, width, height: 14, fill: "#e2e8f0", rx: 3 }),
    node("rect", { x: 0, y: 2, width: (share * width).toFixed(1), height: 14, fill: "#2457c5", rx: 3 }));
  const text = node("text", { x: 4, y: 13, fill: "#1d2330", "font-size": 11 });
  text.textContent = `${label} ${used}/${total} allocated, ${Math.max(0, total - used)} idle`;
  svg.append(text);
  return svg;
}
