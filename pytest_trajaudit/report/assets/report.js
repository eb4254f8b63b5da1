// pytest-trajaudit HTML report (report/html.py inlines this file).
// Everything in the data came from trajectories an agent wrote: it reaches the page only as text nodes
// (textContent / createTextNode), never as markup, attribute values other than our own ids, or URLs.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("trajaudit-data").textContent);
  const PAGE = 200; // rows rendered at a time: a 10,000-job report stays responsive
  const jobs = DATA.jobs;
  let shown = PAGE;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return node;
  }

  function badge(status) {
    return el("span", { class: "v v-" + String(status).replace(/[^A-Za-z]+/g, "-") }, status);
  }

  function evId(j, i) {
    return "ev-" + j + "-" + Number(i);
  }

  function matches(job) {
    const verdict = document.getElementById("f-verdict").value;
    const code = document.getElementById("f-code").value;
    const status = document.getElementById("f-status").value;
    const text = document.getElementById("f-text").value.trim().toLowerCase();
    if (verdict && job.verdict !== verdict) return false;
    if (code) {
      const st = job.statuses[code];
      if (st === undefined) return false;
      if (status && st !== status) return false;
    } else if (status && !Object.values(job.statuses).includes(status)) {
      return false;
    }
    if (text && !(job.job.toLowerCase().includes(text) || (job.config || "").toLowerCase().includes(text))) return false;
    return true;
  }

  function findingNode(j, f) {
    const node = el("div", { class: "finding", "data-code": f.code }, badge(f.status), " ",
      el("span", { class: "code" }, f.code), el("span", { class: "ev" }, f.evidence || ""));
    for (const i of f.events || []) {
      const a = el("a", { href: "#" + evId(j, i), class: "evlink", "data-event": String(Number(i)) }, "event #" + Number(i));
      a.addEventListener("click", (e) => {
        e.preventDefault();
        const row = document.getElementById(evId(j, i));
        document.querySelectorAll("tr.active").forEach((r) => r.classList.remove("active"));
        if (row) {
          row.classList.add("active");
          row.scrollIntoView({ block: "center" });
        }
      });
      node.appendChild(a);
    }
    return node;
  }

  function timelineNode(j, job) {
    const tl = job.timeline;
    if (!tl || !tl.rows || !tl.rows.length) return el("p", { class: "muted" }, "no timeline (the job could not be read, or it has no events)");
    const body = el("tbody");
    let last = -1;
    for (const r of tl.rows) {
      if (last >= 0 && r.i > last + 1) body.appendChild(el("tr", { class: "gap" }, el("td", { colspan: "6" }, "… " + (r.i - last - 1) + " event(s) …")));
      last = r.i;
      const tr = el("tr", { id: evId(j, r.i), class: r.cited ? "cited" : "" },
        el("td", {}, "#" + Number(r.i)), el("td", {}, r.type || ""), el("td", {}, r.kind || ""),
        el("td", {}, r.tool || ""), el("td", { class: "text" }, r.path || ""), el("td", { class: "text" }, r.text || ""));
      body.appendChild(tr);
    }
    const head = el("thead", {}, el("tr", {}, el("th", {}, "event"), el("th", {}, "type"), el("th", {}, "kind"),
      el("th", {}, "tool"), el("th", {}, "path"), el("th", {}, "text")));
    return el("div", {}, el("p", { class: "muted" }, tl.rows.length + " of " + tl.n_events +
      " events: the first and last, and every event a finding cites with its neighbours (highlighted)"),
    el("table", { class: "timeline" }, head, body));
  }

  function detailNode(j, job) {
    const box = el("div", {});
    if (job.error) box.appendChild(el("p", {}, badge("ERROR"), " ", job.error));
    if (job.reasons && job.reasons.length) {
      const ul = el("ul", { class: "reasons" });
      for (const r of job.reasons) ul.appendChild(el("li", {}, r));
      box.appendChild(ul);
    }
    const findings = job.findings || [];
    box.appendChild(el("h4", {}, findings.length ? "Findings" : "No FAIL or WARN finding"));
    for (const f of findings) box.appendChild(findingNode(j, f));
    box.appendChild(el("h4", {}, "Timeline"));
    box.appendChild(timelineNode(j, job));
    return box;
  }

  function toggle(tr, j, job) {
    const next = tr.nextSibling;
    if (next && next.classList && next.classList.contains("detail")) {
      next.remove();
      return;
    }
    // rendered on demand: a timeline costs DOM only once its job is opened
    const detail = el("tr", { class: "detail", id: "detail-" + j }, el("td", { colspan: "6" }, detailNode(j, job)));
    tr.after(detail);
  }

  function render() {
    const body = document.getElementById("job-rows");
    body.textContent = "";
    const hits = [];
    jobs.forEach((job, j) => { if (matches(job)) hits.push(j); });
    for (const j of hits.slice(0, shown)) {
      const job = jobs[j];
      const codes = Object.entries(job.statuses).filter(([, s]) => s === "FAIL" || s === "WARN").map(([c, s]) => c + " " + s);
      const tr = el("tr", { class: "job", "data-job": String(j), "data-verdict": job.verdict },
        el("td", {}, badge(job.verdict)), el("td", { class: "id" }, job.job), el("td", {}, job.config || ""),
        el("td", {}, job.trial || ""), el("td", {}, job.reward === null || job.reward === undefined ? "—" : String(job.reward)),
        el("td", {}, codes.join(", ")));
      tr.addEventListener("click", () => toggle(tr, j, job));
      body.appendChild(tr);
    }
    document.getElementById("job-count").textContent = hits.length + " of " + jobs.length + " job(s)";
    const more = document.getElementById("more");
    more.hidden = hits.length <= shown;
    more.textContent = "show " + Math.min(PAGE, hits.length - shown) + " more";
  }

  for (const id of ["f-verdict", "f-code", "f-status", "f-text"]) {
    document.getElementById(id).addEventListener("input", () => { shown = PAGE; render(); });
  }
  document.getElementById("more").addEventListener("click", () => { shown += PAGE; render(); });
  render();
  document.body.setAttribute("data-ready", "1");
})();
