// Catalog sync (GET /catalog; Limits > Freshness, safe sync).
import { CallFailed } from "./transport.mjs";

const FILMS_BEFORE_UNAVAILABLE = 2; // complete walks a film must be missing from

// One complete walk: { films: Map(id -> film), episodes: Map(film id -> [episode]) }.
// Unpaged (one consistent snapshot) unless a page size is given.
export async function walkCatalog(api, pageSize = null) {
  const films = new Map();
  const episodes = new Map();
  const take = (page) => {
    if (!Array.isArray(page.films) || !Array.isArray(page.episodes)) {
      throw new CallFailed("unreadable", "catalog: a page without films[] and episodes[]");
    }
    for (const film of page.films) {
      films.delete(film.id); // a film served again: the later copy wins
      films.set(film.id, film);
      episodes.set(film.id, []);
    }
    for (const episode of page.episodes) {
      if (!episodes.has(episode.film_id)) episodes.set(episode.film_id, []);
      episodes.get(episode.film_id).push(episode);
    }
  };
  if (pageSize === null) {
    take((await api.get("catalog")).json);
    return { films, episodes, pages: 1 };
  }
  let cursor = null;
  let pages = 0;
  const handed = new Set();
  do {
    const query = { limit: pageSize };
    if (cursor !== null) query.cursor = cursor;
    const page = (await api.get("catalog", query)).json;
    take(page);
    pages += 1;
    cursor = typeof page.next_cursor === "string" ? page.next_cursor : null;
    if (cursor !== null && handed.has(cursor)) {
      throw new CallFailed("unreadable", "catalog: the walk handed out a cursor twice");
    }
    handed.add(cursor);
  } while (cursor !== null);
  return { films, episodes, pages };
}

// Free episodes: episode_no up to and including free_until_episode (0: none; null: all paid).
function isFree(film, episodeNo) {
  const limit = film.free_until_episode;
  return Number.isInteger(limit) && episodeNo <= limit;
}

function keepEpisode(film, before, episode) {
  return {
    episode_no: episode.episode_no,
    free: isFree(film, episode.episode_no),
    poster_url: episode.poster_url ?? film.poster_url ?? null,
    id: episode.id ?? null,
    status: episode.status ?? null,
    stream_ready: episode.stream_ready === true,
    // null means "unknown, keep the previous value"
    vid_ready: episode.vid_ready ?? before?.vid_ready ?? null,
    title: episode.title ?? null,
    subtitles: (episode.subtitles ?? []).map((s) => s.lang),
  };
}

// The title a viewer reading `lang` is shown: that language, else English (the catalog's
// fallback), else the film's own title.
export function titleIn(film, lang) {
  const i18n = film.title_i18n ?? {};
  return i18n[lang] ?? i18n.en ?? film.title ?? null;
}

function shownTitle(film) {
  const i18n = film.title_i18n ?? {};
  return film.title ?? i18n.en ?? null;
}

// Applies a complete walk to the state (mutates it).
export function applyWalk(state, walk) {
  const stored = state.catalog.films;
  for (const [id, film] of walk.films) {
    const before = stored[id];
    const oldEpisodes = new Map((before?.episodes ?? []).map((e) => [e.episode_no, e]));
    const rows = (walk.episodes.get(id) ?? []).map((e) => keepEpisode(film, oldEpisodes.get(e.episode_no), e));
    stored[id] = {
      id,
      slug: film.slug ?? null,
      title: shownTitle(film),
      title_i18n: film.title_i18n ?? {},
      display_order: film.display_order ?? null,
      audio_language: film.default_lang ?? film.language ?? null,
      content_rating: film.content_rating ?? null,
      free_until_episode: film.free_until_episode ?? null,
      poster_url: film.poster_url ?? null,
      metadata_version: film.metadata_version ?? null,
      available: true,
      missed_walks: 0,
      episodes: rows.sort((a, b) => a.episode_no - b.episode_no),
    };
  }
  for (const [id, row] of Object.entries(stored)) {
    if (walk.films.has(id)) continue;
    row.missed_walks += 1;
    if (row.missed_walks >= FILMS_BEFORE_UNAVAILABLE) row.available = false;
  }
  state.catalog.walks += 1;
}
