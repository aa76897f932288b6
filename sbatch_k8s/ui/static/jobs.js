// The Jobs page: squeue's filters, the table squeue and sacct fill, kept live by the
// console's event stream (rows put and removed, never a reload), sortable by any column.
import { session, el, stateBadge, jobLink } from "./console.js";

const FILTERS = [
  ["states", "State (-t)", "PD,R or all"],
  ["partitions", "Partition (-p)", ""],
  ["names", "Name (-n)", ""],
  ["users", "User (-u)", ""],
  ["jobs", "Job ids (-j)", "12,13_2"],
  ["since", "History since (sacct -S)", "midnight"],
];
// A message changing more rows than this rebuilds the table instead of editing it.
const BULK_CHANGES = 200;
const saved = { fields: {}, sort: { key: "job", desc: true }, history: true };

function filterForm(onApply) {
  const inputs = {};
  const form = el("form", { class: "filters panel", id: "filters" });
  for (const [name, label, placeholder] of FILTERS) {
    const input = el("input", { name, placeholder, value: saved.fields[name] || "", size: 12 });
    if (name === "users" && !session.identity.operator) {
      input.value = session.identity.user;
      input.disabled = true;
      input.title = "only operators see other users' jobs";
    }
    inputs[name] = input;
    form.append(el("label", {}, label, input));
  }
  const array = el("input", { type: "checkbox", name: "array", checked: saved.fields.array === "1" });
  const history = el("input", { type: "checkbox", name: "history", checked: saved.history });
  form.append(el("label", {}, "One line per array element (-r)", array));
  form.append(el("label", {}, "History (sacct)", history));
  form.append(el("button", { class: "primary", type: "submit", text: "Apply" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    for (const [name, input] of Object.entries(inputs)) {
      if (!input.disabled) saved.fields[name] = input.value.trim();
    }
    saved.fields.array = array.checked ? "1" : "";
    saved.history = history.checked;
    onApply();
  });
  return form;
}

function sortValue(row, key) {
  const value = row.sort[key];
  if (value !== undefined) return value;
  return row.cells[key] || "";
}

function compare(a, b, key) {
  const x = sortValue(a, key), y = sortValue(b, key);
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
  }
  if (typeof x === "number") return x - y;
  return String(x).localeCompare(String(y), undefined, { numeric: true });
}

function rowElement(row, columns) {
  const tr = el("tr", { "data-key": row.key, "data-state": row.state,
    class: row.source === "sacct" ? "history" : null });
  for (const column of columns) {
    const text = row.cells[column.key];
    if (column.key === "job") tr.append(el("td", {}, jobLink(row.key)));
    else if (column.key === "state") tr.append(el("td", {}, stateBadge(row.st, row.state), " ", text));
    else tr.append(el("td", { text }));
  }
  return tr;
}

export function show(main) {
  const columns = session.columns;
  const rows = new Map();
  const elements = new Map();
  const head = el("tr");
  const body = el("tbody", { id: "job-rows" });
  const count = el("span", { class: "count", id: "job-count" });
  const problem = el("p", { class: "error", id: "jobs-error" });
  let source = null;

  // The rows on screen, in their sorted order (kept in step with the tbody's children).
  let order = [];
  const visible = (row) => saved.history || row.source !== "sacct";
  const before = (a, b) => compare(a, b, saved.sort.key) * (saved.sort.desc ? -1 : 1) < 0;

  function counted() {
    const history = order.filter((r) => r.source === "sacct").length;
    count.textContent = `${order.length} jobs (${order.length - history} in squeue, ` +
      `${history} from sacct's history)`;
    main.dataset.rendered = String(Date.now());
  }

  // The whole table again (first message, another sort, the history box).
  function render() {
    order = [...rows.values()].filter(visible);
    order.sort((a, b) => compare(a, b, saved.sort.key) * (saved.sort.desc ? -1 : 1));
    const fragment = document.createDocumentFragment();
    for (const row of order) fragment.append(elements.get(row.key));
    body.replaceChildren(fragment);
    for (const th of head.children) {
      th.classList.toggle("sorted", th.dataset.key === saved.sort.key);
      th.classList.toggle("desc", th.dataset.key === saved.sort.key && saved.sort.desc);
    }
    counted();
  }

  // Only what a message changed: rows removed, replaced in place, or inserted where the
  // order puts them (a table of 10,000 rows is not rebuilt for one new job).
  function place(row) {
    let low = 0, high = order.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (before(order[middle], row)) low = middle + 1; else high = middle;
    }
    const next = order[low];
    order.splice(low, 0, row);
    body.insertBefore(elements.get(row.key), next ? elements.get(next.key) : null);
  }

  function unplace(key) {
    const at = order.findIndex((r) => r.key === key);
    if (at >= 0) order.splice(at, 1);
  }

  function update(message) {
    for (const key of message.remove || []) {
      const element = elements.get(key);
      if (element) element.remove();
      unplace(key);
      rows.delete(key); elements.delete(key);
    }
    for (const row of message.put || []) {
      const old = rows.get(row.key), oldElement = elements.get(row.key);
      const element = rowElement(row, columns);
      rows.set(row.key, row); elements.set(row.key, element);
      const same = old && visible(old) && visible(row) &&
        compare(old, row, saved.sort.key) === 0 && oldElement.isConnected;
      if (same) {
        oldElement.replaceWith(element);
        order[order.indexOf(old)] = row;
        continue;
      }
      if (oldElement) { oldElement.remove(); unplace(row.key); }
      if (visible(row)) place(row);
    }
    counted();
  }

  for (const column of columns) {
    head.append(el("th", { "data-key": column.key, text: column.title, onclick: () => {
      saved.sort = { key: column.key, desc: saved.sort.key === column.key && !saved.sort.desc };
      render();
    } }));
  }

  function connect() {
    if (source) source.close();
    rows.clear(); elements.clear();
    problem.textContent = "";
    let first = true;
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(saved.fields)) if (value) query.set(name, value);
    source = new EventSource(`/api/jobs/live?${query}`);
    // a stream (re)opened starts with the whole table
    source.onopen = () => { first = true; };
    source.onmessage = (event) => {
      const message = JSON.parse(event.data);
      problem.textContent = message.error || "";
      const changes = (message.put || []).length + (message.remove || []).length;
      if (first || changes > BULK_CHANGES) {
        if (first) { rows.clear(); elements.clear(); }
        first = false;
        for (const key of message.remove || []) { rows.delete(key); elements.delete(key); }
        for (const row of message.put || []) {
          rows.set(row.key, row);
          elements.set(row.key, rowElement(row, columns));
        }
        render();
      } else if (changes) {
        update(message);
      }
      main.dataset.updates = String(Number(main.dataset.updates || 0) + 1);
    };
    source.onerror = async () => {
      // a refused filter comes back as a 400 before the stream opens: say why
      const check = await fetch(`/api/jobs?${query}`).then((r) => r.json()).catch(() => null);
      if (check && check.error) { problem.textContent = check.error; source.close(); }
    };
  }

  main.append(el("h1", {}, "Jobs ", count), filterForm(connect), problem,
    el("table", { id: "jobs" }, el("thead", {}, head), body));
  connect();
  return () => source && source.close();
}
