// The live view: one Plotly figure per signal, extended with every sample the server streams.
"use strict";

const WINDOW_S = 60;  // seconds of history kept on screen
const state = { samples: 0, last: null, traces: {} };
window.bufferlabView = state;

function label(info, port) {
  const host = info.labels[String(port)];
  return host ? `port ${port} (${host})` : `port ${port}`;
}

// Each figure: its axis titles (units named) and, per port, the values its traces plot.
function figures(info) {
  const perPort = (name, value, dash) => info.ports.map((p) => ({
    name: name(p), value: (s) => value(s.ports[String(p)]), dash }));
  // On Tofino (a TNA program) the buffer is the traffic manager's: bytes are the cells it
  // holds times the cell size, and one more figure shows the cells themselves.
  const tm = info.tofino ? {
    cells: { title: "Queue depth in Tofino's TM", y: "cells", traces: [
      ...perPort((p) => `${label(info, p)}`, (v) => v.occupancy_cells ?? null),
      ...(info.queues > 1 ? info.ports.flatMap((p) => [...Array(info.queues).keys()].map((q) => ({
        name: `${label(info, p)} queue ${q}`, dash: "dot",
        value: (s) => s.ports[String(p)].queues[String(q)].occupancy_cells ?? null }))) : [])] },
  } : {};
  return {
    occupancy: { title: info.tofino ? "Egress buffer of each port (TM cells × cell size)"
      : "Egress buffer of each port", y: "bytes", traces: [
      ...perPort((p) => `${label(info, p)} occupancy`, (v) => v.occupancy_bytes),
      ...perPort((p) => `${label(info, p)} threshold`, (v) => v.threshold_bytes, "dot")] },
    rates: { title: "Per-host rates", y: "Mbit/s", traces: [
      ...perPort((p) => `${info.labels[String(p)] || p} → switch`,
        (v) => v.rx_bps === null ? null : v.rx_bps / 1e6),
      ...perPort((p) => `switch → ${info.labels[String(p)] || p}`,
        (v) => v.tx_bps === null ? null : v.tx_bps / 1e6, "dot")] },
    drops: { title: "Tail drops (since start)", y: "frames",
      traces: perPort((p) => label(info, p), (v) => v.drops) },
    pause: { title: "PAUSE: 1 = host paused by us / port buffer in XOFF", y: "state",
      traces: [
        ...perPort((p) => `${info.labels[String(p)] || p} paused`, (v) => v.paused),
        ...perPort((p) => `${label(info, p)} XOFF`, (v) => v.xoff_active, "dot")] },
    bcn_fb: { title: "BCN: Fb of the last frame sent per congestion point", y: "64-byte pages",
      traces: info.ports.flatMap((p) => [...Array(info.queues).keys()].map((q) => ({
        name: `${label(info, p)} queue ${q}`,
        value: (s) => s.ports[String(p)].queues[String(q)].bcn_frames
          ? s.ports[String(p)].queues[String(q)].bcn_fb_pages : null }))) },
    bcn_frames: { title: "BCN, PAUSE and XON frames sent (since start)", y: "frames",
      traces: [
        ...perPort((p) => `BCN from ${label(info, p)}`, (v) => v.bcn_frames),
        ...perPort((p) => `PAUSE to ${info.labels[String(p)] || p}`, (v) => v.pause_frames, "dash"),
        ...perPort((p) => `XON to ${info.labels[String(p)] || p}`, (v) => v.xon_frames, "dot")] },
    ...tm,
  };
}

function draw(info) {
  state.traces = figures(info);
  document.getElementById("cells").style.display = info.tofino ? "block" : "none";
  for (const [id, fig] of Object.entries(state.traces)) {
    const xs = info.samples.map((s) => s.t_s);
    const data = fig.traces.map((t) => ({
      x: xs, y: info.samples.map(t.value), name: t.name, mode: "lines",
      line: { dash: t.dash || "solid", shape: id === "pause" ? "hv" : "linear" } }));
    Plotly.newPlot(id, data, {
      title: { text: fig.title, font: { size: 14 } }, margin: { t: 34, r: 10, b: 36, l: 60 },
      xaxis: { title: { text: "time (s)" } }, yaxis: { title: { text: fig.y } },
      legend: { font: { size: 10 } } }, { displayModeBar: false });
  }
}

// Samples are counted as they arrive but drawn in batches: a redraw of six figures can take
// longer than the sampling interval on a slow machine (software rendering), and drawing each
// event would queue redraws without bound and starve everything else on the page.
// The next batch waits as long as the last one took to draw, so drawing takes at most about
// half of the page's time however slow the machine.
const pending = [];
let drawCostMs = 0;

function receive(sample) {
  state.samples += 1;
  state.last = sample;
  pending.push(sample);
  if (pending.length === 1) {
    setTimeout(flush, Math.min(drawCostMs, 1000));
  }
}

function flush() {
  const started = performance.now();
  const batch = pending.splice(0);
  for (const [id, fig] of Object.entries(state.traces)) {
    const idx = fig.traces.map((_, i) => i);
    Plotly.extendTraces(id, {
      x: fig.traces.map(() => batch.map((s) => s.t_s)),
      y: fig.traces.map((t) => batch.map(t.value)) },
      idx, Math.round(WINDOW_S / state.interval_s));
  }
  const sample = batch[batch.length - 1];
  const status = document.getElementById("status");
  status.className = "";
  status.textContent = `sample ${state.samples} at ${sample.t_s.toFixed(1)} s; pool ` +
    `${sample.pool_used_bytes} of ${sample.pool_bytes} bytes in use` + tmStatus(sample);
  drawCostMs = performance.now() - started;
}

// What the status line says of Tofino's TM: its cell size and the PAUSE frames it asked for.
function tmStatus(sample) {
  if (sample.tm_error) {
    return `; TM not read: ${sample.tm_error}`;
  }
  if (!sample.cell_bytes) {
    return "";
  }
  return `; Tofino TM: ${sample.cell_bytes}-byte cells, ` +
    `PAUSE frames asked for: XOFF ${sample.tm_xoff}, XON ${sample.tm_xon}`;
}

fetch("/history").then((r) => r.json()).then((info) => {
  state.interval_s = info.interval_s;
  draw(info);
  if (info.error) {
    document.getElementById("status").textContent = `switch: ${info.error}`;
  }
  const events = new EventSource("/events");
  events.onmessage = (e) => receive(JSON.parse(e.data));
  events.onerror = () => {
    const status = document.getElementById("status");
    status.className = "error";
    status.textContent = "lost the view server (is the lab still running?)";
  };
});

// The last packets of a chosen port (as many as the server keeps), from the switch's log,
// when the server follows one.
function refreshTraces() {
  const select = document.getElementById("trace_port");
  const port = select.value === "" ? -1 : Number(select.value);
  fetch(`/traces?port=${port}`).then((r) => r.json()).then((t) => {
    if (t.error) {
      return;
    }
    document.getElementById("traces").style.display = "block";
    for (const p of t.ports) {
      if (![...select.options].some((o) => Number(o.value) === p)) {
        select.add(new Option(String(p), String(p)));
      }
    }
    if (port < 0 && t.ports.length) {
      select.value = String(t.ports[0]);
      refreshTraces();
      return;
    }
    state.tracePackets = t.packets.length;
    document.getElementById("trace_lines").textContent =
      t.packets.map((p) => p.lines.join("\n")).join("\n\n");
  }).finally(() => setTimeout(refreshTraces, 1000));
}
document.getElementById("trace_port").onchange = () => refreshTraces();
refreshTraces();
