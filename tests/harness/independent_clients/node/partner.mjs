#!/usr/bin/env node
// A partner's integration of the Delivery API v1, written from the spec alone (Node 20+, built-in
// fetch, no dependencies). See README.md for the commands, the state file and the exit codes.
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { applyWalk, titleIn, walkCatalog } from "./lib/catalog.mjs";
import { fetchFinal, syncCreatives, syncPlaylists, syncSeries, usable } from "./lib/feeds.mjs";
import { loadState, saveState, StateFileError } from "./lib/store.mjs";
import { BATCH_MAX, requestTickets } from "./lib/tickets.mjs";
import { Api, CallFailed, pause } from "./lib/transport.mjs";

const EXIT = { done: 0, apiFailed: 2, itemRefused: 3, usage: 64, stateFile: 74 };
const MIN_POLL_SECONDS = 60; // the catalog is polled on a schedule of minutes
const USAGE = `usage: partner.mjs <command> [options]
  pull-catalog    --state FILE [--page-size N]
  watch-catalog   --state FILE --walks N [--every SECONDS]   (never under ${MIN_POLL_SECONDS} s)
  pull-creatives  --state FILE
  fetch-final     --state FILE --creative ID --to FILE
  pull-series     --state FILE
  pull-playlists  --state FILE
  tickets         EPISODE_ID [EPISODE_ID ...] [--state FILE] [--device-id ID --device-key KEY]
                  [--viewer ACCOUNT]   (the signed-in account: never sent, see README.md)
  show-config
  dump            --state FILE [--lang BCP47]   (titles as a viewer reading that language sees them)
common: --base-url URL (or DELIVERY_BASE_URL), --key-env NAME (default DELIVERY_API_KEY),
        --api-version YYYY-MM-DD, --quiet`;

class Usage extends Error {}

// The viewer_ref of a signed-in account: a random session id, the same for that account while
// the state file lives (so the server may hand the same ticket back); the account stays here.
function sessionOf(account, path) {
  if (!path) return `s-${randomUUID()}`;
  const state = loadState(path);
  state.sessions = state.sessions ?? {};
  if (!state.sessions[account]) {
    state.sessions[account] = `s-${randomUUID()}`;
    saveState(path, state);
  }
  return state.sessions[account];
}

const say = (line) => process.stdout.write(`${line}\n`);

function options(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      state: { type: "string" },
      "page-size": { type: "string" },
      walks: { type: "string" },
      every: { type: "string" },
      creative: { type: "string" },
      to: { type: "string" },
      "device-id": { type: "string" },
      "device-key": { type: "string" },
      viewer: { type: "string" },
      lang: { type: "string" },
      "base-url": { type: "string" },
      "key-env": { type: "string", default: "DELIVERY_API_KEY" },
      "api-version": { type: "string" },
      quiet: { type: "boolean", default: false },
    },
  });
  return { values, positionals };
}

function wholeNumber(text, name, low, high) {
  const number = Number(text);
  if (!Number.isInteger(number) || number < low || number > high) {
    throw new Usage(`--${name} is a whole number from ${low} to ${high}`);
  }
  return number;
}

function needState(values) {
  if (!values.state) throw new Usage("this command needs --state FILE");
  return values.state;
}

function connect(values, log) {
  const baseUrl = values["base-url"] ?? process.env.DELIVERY_BASE_URL;
  const apiKey = process.env[values["key-env"]];
  if (!baseUrl) throw new Usage("no base URL: --base-url or DELIVERY_BASE_URL");
  if (!apiKey) throw new Usage(`no API key in the environment variable ${values["key-env"]}`);
  return new Api({ baseUrl, apiKey, apiVersion: values["api-version"] ?? null, log });
}

async function pullCatalog(api, path, pageSize) {
  const state = loadState(path);
  const walk = await walkCatalog(api, pageSize);
  applyWalk(state, walk);
  saveState(path, state);
  const films = Object.values(state.catalog.films);
  say(`catalog: ${walk.films.size} films in ${walk.pages} page(s); ` +
    `${films.filter((f) => f.available).length} available, ${films.filter((f) => !f.available).length} withdrawn`);
}

function exported(state, lang) {
  const shown = lang === undefined ? () => ({}) : (film) => ({ title_shown: titleIn(film, lang) });
  const films = Object.values(state.catalog.films)
    .sort((a, b) => String(a.id).localeCompare(String(b.id)))
    .map((film) => ({
      id: film.id,
      slug: film.slug,
      title: film.title,
      ...shown(film),
      audio_language: film.audio_language,
      content_rating: film.content_rating,
      available: film.available,
      missed_walks: film.missed_walks,
      metadata_version: film.metadata_version,
      episodes: film.episodes.map((e) => ({
        episode_no: e.episode_no,
        id: e.id,
        free: e.free,
        poster_url: e.poster_url,
        status: e.status,
        stream_ready: e.stream_ready,
        vid_ready: e.vid_ready,
      })),
    }));
  const items = [...state.creatives.items]
    .sort((a, b) => String(a.creative_id).localeCompare(String(b.creative_id)))
    .map((row) => ({
      creative_id: row.creative_id,
      status: row.status,
      updated_at: row.updated_at,
      rights_ends_at: row.rights_ends_at,
      final_ready: row.final_ready,
      has_file_url: row.file_url !== null,
      final_size: row.final_size ?? null,
      usable: usable(row),
    }));
  const listing = (rows, extra) => Object.values(rows)
    .sort((a, b) => String(a.code).localeCompare(String(b.code)))
    .map((row) => ({
      code: row.code,
      status: row.status,
      content_version: row.content_version,
      details_fetched: row.details_fetched,
      ...extra(row),
    }));
  return {
    format: "delivery-client-state/1",
    catalog: { walks: state.catalog.walks, ...(lang === undefined ? {} : { display_lang: lang }), films },
    creatives: { items, updated_since: state.creatives.cursorSince },
    series: { items: listing(state.series, (row) => ({
      age_rating: row.detail?.age_rating ?? null,
      artwork: row.detail?.artwork ?? [],
      tags: row.detail?.tags ?? [],
    })) },
    playlists: { items: listing(state.playlists, (row) => ({ licensed: row.granted === true })) },
    playback: { tickets: state.tickets ?? [] },
  };
}

async function run(argv) {
  const [command, ...rest] = argv;
  const { values, positionals } = options(rest);
  const log = values.quiet ? () => {} : (line) => process.stderr.write(`${line}\n`);
  switch (command) {
    case "pull-catalog": {
      const pageSize = values["page-size"] ? wholeNumber(values["page-size"], "page-size", 1, 200) : null;
      await pullCatalog(connect(values, log), needState(values), pageSize);
      return EXIT.done;
    }
    case "watch-catalog": {
      const path = needState(values);
      const walks = wholeNumber(values.walks ?? "1", "walks", 1, 1_000_000);
      const every = Math.max(MIN_POLL_SECONDS, wholeNumber(values.every ?? "300", "every", 0, 86_400));
      const api = connect(values, log);
      for (let n = 0; n < walks; n++) {
        const started = performance.now() / 1000;
        await pullCatalog(api, path, null);
        if (n + 1 < walks) await pause(started + every - performance.now() / 1000);
      }
      return EXIT.done;
    }
    case "pull-creatives": {
      const path = needState(values);
      const state = loadState(path);
      const result = await syncCreatives(connect(values, log), state);
      state.creatives = { items: result.items, cursorSince: result.cursorSince };
      saveState(path, state);
      say(`creatives: ${result.received} received, ${result.items.length} stored`);
      return EXIT.done;
    }
    case "fetch-final": {
      const path = needState(values);
      if (!values.creative || !values.to) throw new Usage("fetch-final needs --creative ID and --to FILE");
      const state = loadState(path);
      try {
        const size = await fetchFinal(connect(values, log), state, values.creative, values.to);
        say(`final file of ${values.creative}: ${size} bytes written`);
      } finally {
        saveState(path, state); // a file link read again is kept even when the download failed
      }
      return EXIT.done;
    }
    case "pull-series":
    case "pull-playlists": {
      const path = needState(values);
      const state = loadState(path);
      const api = connect(values, log);
      const kind = command === "pull-series" ? "series" : "playlists";
      state[kind] = kind === "series" ? await syncSeries(api, state) : await syncPlaylists(api, state);
      saveState(path, state);
      const rows = Object.values(state[kind]);
      say(`${kind}: ${rows.length} listed, ${rows.filter((r) => r.details_fetched).length} with details`);
      return EXIT.done;
    }
    case "tickets": {
      if (positionals.length < 1 || positionals.length > BATCH_MAX) {
        throw new Usage(`tickets takes 1 to ${BATCH_MAX} episode ids`);
      }
      const id = values["device-id"];
      const key = values["device-key"];
      if ((id === undefined) !== (key === undefined)) throw new Usage("give both --device-id and --device-key, or neither");
      const device = id === undefined ? {} : { union_info: id, drm_kek: key };
      const session = values.viewer === undefined ? {} : { viewer_ref: sessionOf(values.viewer, values.state) };
      const { tickets, refused } = await requestTickets(connect(values, log), positionals, { ...device, ...session }, log);
      for (const t of tickets) {
        say(`ticket ${t.episode_id}: ${t.kind}, ${t.protection}, until ${t.expires_at}, ` +
          `paid episodes ${t.sellable ? "may" : "may not"} be sold, subtitles [${t.subtitles.join(",")}]`);
      }
      for (const r of refused) {
        say(`refused ${r.episode_id}: ${r.status} ${r.code ?? "(no code)"}${r.reason ? ` (${r.reason})` : ""}`);
      }
      if (values.state) {
        const state = loadState(values.state);
        state.tickets = [
          ...tickets.map((t) => ({ episode_id: t.episode_id, status: 200, protection: t.protection,
            expires_at: t.expires_at, sellable_as_paid: t.sellable })),
          ...refused.map((r) => ({ episode_id: r.episode_id, status: r.status, code: r.code, reason: r.reason })),
        ];
        saveState(values.state, state);
      }
      return refused.length > 0 ? EXIT.itemRefused : EXIT.done;
    }
    case "show-config": {
      const answer = (await connect(values, log).get("config", {}, { profile: "interactive" })).json ?? {};
      const api = answer.api ?? {};
      say(`api ${api.version ?? "?"} (pinned ${api.pinned_version ?? "?"}, latest ${api.latest_version ?? "?"}), ` +
        `scopes [${(answer.key?.scopes ?? []).join(",")}], deprecations ${(answer.deprecations ?? []).length}`);
      return EXIT.done;
    }
    case "dump": {
      say(JSON.stringify(exported(loadState(needState(values)), values.lang), null, 1));
      return EXIT.done;
    }
    default:
      throw new Usage(command ? `unknown command ${command}` : "no command");
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof Usage || error?.code?.startsWith?.("ERR_PARSE_ARGS")) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    process.exitCode = EXIT.usage;
  } else if (error instanceof StateFileError) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = EXIT.stateFile;
  } else if (error instanceof CallFailed) {
    process.stderr.write(`failed: ${error.message}\n`);
    process.exitCode = EXIT.apiFailed;
  } else {
    throw error;
  }
}
