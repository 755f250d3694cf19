// The live page: the state comes from /api/events (server-sent events), replays from /api/games.
"use strict";

const $ = (id) => document.getElementById(id);
let source = null;
let lastSeen = 0;
let state = null;

function svgNode(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const root = doc.documentElement;
  if (root.nodeName !== "svg") return document.createTextNode("");
  return document.importNode(root, true);
}

function setDiagram(box, text) {
  box.replaceChildren(text ? svgNode(text) : document.createTextNode("no game yet"));
}

function change(delta) {
  const parts = Object.entries(delta || {}).map(([p, d]) => `${p} ${d > 0 ? "+" : ""}${d}`);
  return parts.join(", ");
}

function links(box, prefix, game) {
  box.replaceChildren();
  const formats = game === "blokus-duo" ? ["sgf", "txt", "jsonl"] : ["txt", "jsonl"];
  for (const fmt of formats) {
    const a = document.createElement("a");
    a.href = `${prefix}.${fmt}`;
    a.textContent = fmt;
    a.setAttribute("download", "");
    box.append(a, " ");
  }
}

function moveItem(entry) {
  const li = document.createElement("li");
  li.value = entry.n;
  const text = entry.move ? entry.action : `(${entry.action})`;
  li.textContent = `${entry.player || ""} ${text} `;
  if (!entry.move) li.className = "event";
  const delta = change(entry.score_change);
  if (delta) {
    const span = document.createElement("span");
    const gain = Object.values(entry.score_change).some((d) => d > 0);
    span.className = gain ? "gain" : "loss";
    span.textContent = delta;
    li.append(span);
  }
  return li;
}

function render(s) {
  const ended = s.over && !(state && state.over);
  state = s;
  $("title").textContent = s.game ? `tabletop referee: ${s.game}` : "tabletop referee";
  const banner = $("banner");
  banner.hidden = false;
  if (s.clear_offered) {
    banner.className = "hand";
    banner.textContent = "Something over the still board? If nothing is, press OK on the referee";
  } else if (s.illegal) {
    banner.className = "illegal";
    banner.textContent = `Illegal: ${s.illegal.reason}` +
      (s.illegal.cells.length ? ` (fix ${s.illegal.cells.join(", ")})` : "") +
      (s.illegal.offer ? `; OK on the referee if it was ${s.illegal.offer}` : "");
  } else if (s.question) {
    banner.className = "question";
    banner.textContent = `The referee asks: ${s.question.question} ` +
      `OK: ${s.question.ok}; MENU: ${s.question.menu}; ` +
      `UNDO: ${s.question.more ? "the next two" : "neither"}`;
  } else if (s.over) {
    banner.className = "over";
    banner.textContent = s.winner === "draw" ? "Game over: a draw" : `Game over: ${s.winner} wins`;
  } else if (s.occluded) {
    banner.className = "hand";
    banner.textContent = "Hand over the board…";
  } else if (s.problem) {
    banner.className = "info";
    banner.textContent = `Check the board: ${s.problem.reason}` +
      (s.problem.setup ? "; OK on the referee if it is set up for the game" : "");
  } else if (s.phase !== "play") {
    banner.className = "info";
    banner.textContent = s.status || s.phase;
  } else {
    banner.hidden = true;
  }
  setDiagram($("board"), s.diagram);
  $("turn").textContent = s.over ? "" : s.to_move ? `${s.to_move} to move` : "";
  const body = $("scores").tBodies[0];
  body.replaceChildren();
  for (const [player, score] of Object.entries(s.scores)) {
    const row = body.insertRow();
    row.dataset.player = player;
    if (player === s.to_move) row.className = "to-move";
    row.insertCell().textContent = player;
    const cell = row.insertCell();
    cell.className = "score";
    cell.textContent = score;
  }
  const moves = $("moves");
  moves.replaceChildren(...s.log.map(moveItem));
  moves.scrollTop = moves.scrollHeight;
  if (s.game) links($("downloads"), "/api/export", s.game);
  refreshCamera();
  if (ended) loadGames(); // the game just saved joins the finished ones
}

function refreshCamera() {
  const img = $("camera");
  const probe = new Image();
  probe.onload = () => { img.src = probe.src; img.hidden = false; };
  probe.src = `/api/camera.jpg?t=${Date.now()}`;
}

function connect() {
  if (source) source.close();
  source = new EventSource("/api/events");
  source.addEventListener("state", (event) => {
    lastSeen = Date.now();
    $("connection").className = "live";
    $("connection").textContent = "live";
    render(JSON.parse(event.data));
  });
  source.onopen = () => { lastSeen = Date.now(); };
  source.onerror = () => {
    $("connection").className = "offline";
    $("connection").textContent = "reconnecting…";
    if (source.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  };
}

// A phone that slept may hold a dead connection: reconnect when the page comes back.
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState !== "visible") return;
  if (!source || source.readyState === EventSource.CLOSED || Date.now() - lastSeen > 20000) {
    connect();
  }
});
setInterval(() => { if (document.visibilityState === "visible") refreshCamera(); }, 3000);

// ----------------------------------------------------------------- finished games
let replay = null;

async function loadGames() {
  const answer = await fetch("/api/games");
  if (!answer.ok) return;
  const { games } = await answer.json();
  const list = $("games");
  list.replaceChildren();
  for (const g of games) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "#" + g.id;
    a.dataset.id = g.id;
    a.textContent = g.id;
    a.addEventListener("click", (event) => { event.preventDefault(); openGame(g.id); });
    const scores = Object.entries(g.scores).map(([p, s]) => `${p} ${s}`).join(", ");
    li.append(a, ` ${g.game}: ${scores}; winner ${g.winner ?? "-"}`);
    list.append(li);
  }
}

async function openGame(id) {
  const answer = await fetch(`/api/games/${encodeURIComponent(id)}`);
  if (!answer.ok) return;
  replay = await answer.json();
  $("replay").hidden = false;
  $("replay-title").textContent = `${replay.game}: ${replay.id}`;
  $("step").max = replay.actions;
  links($("replay-downloads"), `/api/games/${encodeURIComponent(id)}/export`, replay.game);
  show(replay.actions);
}

async function show(n) {
  if (!replay) return;
  n = Math.max(0, Math.min(replay.actions, n));
  $("step").value = n;
  $("step-label").textContent = `${n} / ${replay.actions}`;
  const entry = n ? replay.log[n - 1] : null;
  $("replay-move").textContent = entry
    ? `${entry.n}. ${entry.player || ""} ${entry.action} ${change(entry.score_change)}` +
      ` | ${Object.entries(entry.scores).map(([p, s]) => `${p} ${s}`).join(", ")}`
    : "the empty board";
  const answer = await fetch(
    `/api/games/${encodeURIComponent(replay.id)}/diagram.svg?move=${n}`);
  if (answer.ok && Number($("step").value) === n) setDiagram($("replay-board"), await answer.text());
}

$("first").addEventListener("click", () => show(0));
$("prev").addEventListener("click", () => show(Number($("step").value) - 1));
$("next").addEventListener("click", () => show(Number($("step").value) + 1));
$("last").addEventListener("click", () => show(replay ? replay.actions : 0));
$("step").addEventListener("input", () => show(Number($("step").value)));

connect();
loadGames();
