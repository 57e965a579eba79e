// The envelope feeds: creatives (GET /creatives, /creatives/{id}, the final file), series and
// playlists (lists, then details only when content_version changed).
import { writeFileSync } from "node:fs";
import { CallFailed } from "./transport.mjs";

const DAY = 86_400;
const IMAGE_KINDS = new Set(["poster_3_4", "cover_9_16", "hero_16_9", "title_treatment"]);

// Every item of an envelope list, page by page, following links.next until it is null.
export async function walkList(api, path, query) {
  const items = [];
  const visited = new Set();
  let url = api.endpoint(path, query);
  while (url !== null) {
    const answer = (await api.call("GET", url)).json;
    const data = answer?.data;
    if (!data || !Array.isArray(data.items)) {
      throw new CallFailed("unreadable", `${path}: a page without data.items[]`);
    }
    items.push(...data.items);
    visited.add(url);
    const next = answer.links?.next; // null on the last page
    url = typeof next === "string" ? next : null;
    if (url !== null && visited.has(url)) {
      throw new CallFailed("unreadable", `${path}: the walk came back to a page it read`);
    }
  }
  return items;
}

function creativeRow(record) {
  return {
    creative_id: record.creative_id,
    name: record.name ?? null,
    status: record.status ?? null,
    updated_at: record.updated_at ?? null,
    rights_ends_at: record.rights?.ends_at ?? null,
    final_ready: record.final?.ready === true,
    file_url: record.final?.file_url ?? null, // durable share link: kept, never printed
    // the final video's size is final.target's, whatever the placement
    final_size: record.final?.target ? [record.final.target.width, record.final.target.height] : null,
  };
}

// Usable while export rights last: the whole last day (ends_at + 1 day) is included.
export function usable(row, now = Date.now() / 1000) {
  return row.rights_ends_at === null || now < row.rights_ends_at + DAY;
}

export async function syncCreatives(api, state) {
  const since = state.creatives.cursorSince ?? 0;
  const records = await walkList(api, "creatives", { updated_since: since, limit: 100 });
  const items = [...state.creatives.items];
  let newest = since;
  for (const record of records) {
    const row = creativeRow(record);
    const at = items.findIndex((old) => old.creative_id === record.creative_id);
    if (at >= 0) items[at] = row; // a record served again overwrites
    else items.push(row);
    if (Number.isInteger(record.updated_at) && record.updated_at > newest) newest = record.updated_at;
  }
  return { items, cursorSince: newest, received: records.length };
}

// Downloads the final MP4 through the stored share link; a link that answers 410 is replaced
// by reading the creative again. The download link it redirects to is used once, never kept.
export async function fetchFinal(api, state, creativeId, target) {
  const row = state.creatives.items.find((item) => item.creative_id === creativeId);
  if (!row) throw new CallFailed("refused", `creative ${creativeId} is not in the state; sync first`);
  for (let round = 0; round < 2; round++) {
    if (row.file_url === null) {
      const single = (await api.get(`creatives/${creativeId}`)).json;
      Object.assign(row, creativeRow(single.data));
      if (row.file_url === null) throw new CallFailed("refused", `creative ${creativeId}: no final file yet`);
    }
    let opened;
    try {
      opened = await api.call("GET", row.file_url, { withKey: false, label: "final file link" });
    } catch (error) {
      if (error instanceof CallFailed && error.status === 410) {
        row.file_url = null; // revoked or expired: read the creative again
        continue;
      }
      throw error;
    }
    const location = opened.headers.get("location");
    if (opened.status >= 300 && location) {
      const file = await api.call("GET", new URL(location, row.file_url).toString(), {
        withKey: false,
        binary: true,
        label: "final file download",
      });
      writeFileSync(target, file.bytes);
      return file.bytes.length;
    }
    throw new CallFailed("unreadable", "final file link: no redirect to the file", opened.status);
  }
  throw new CallFailed("refused", `creative ${creativeId}: the file link keeps answering 410`);
}

// Lists a feed and reads the details of the items whose content_version changed.
async function syncListing(api, kind, stored, wanted, describe) {
  const listed = await walkList(api, kind, { limit: 100 });
  const next = { ...stored };
  for (const item of listed) {
    const before = stored[item.code];
    const row = {
      code: item.code,
      status: item.status ?? null,
      content_version: item.content_version ?? null,
      details_fetched: before?.details_fetched ?? false,
      detail: before?.detail ?? null,
      granted: item.granted ?? null,
    };
    const changed = !before || before.content_version !== row.content_version || !before.details_fetched;
    if (item.status === "active" && wanted(item) && changed) {
      try {
        row.detail = describe((await api.get(`${kind}/${encodeURIComponent(item.code)}`)).json.data);
        row.details_fetched = true;
      } catch (error) {
        if (!(error instanceof CallFailed && error.status === 404)) throw error;
        row.details_fetched = false; // gone meanwhile: listed again on the next sync
      }
    }
    next[item.code] = row;
  }
  return next;
}

function i18nTitle(data) {
  return data?.title_i18n?.en ?? data?.title ?? null;
}

export function syncSeries(api, state) {
  return syncListing(api, "series", state.series, () => true, (data) => ({
    title: i18nTitle(data),
    language: data?.default_lang ?? data?.language ?? null,
    age_rating: data?.content_rating ?? null, // `tier` is a quality grade, not an age rating
    artwork: (data?.images ?? []).map((image) => image.kind).filter((kind) => IMAGE_KINDS.has(kind)),
    tags: (data?.tags ?? []).map((tag) => tag.slug),
    episodes: Array.isArray(data?.episodes) ? data.episodes.length : 0,
  }));
}

export function syncPlaylists(api, state) {
  // ungranted playlists are listed too; their details have nothing to play
  return syncListing(api, "playlists", state.playlists, (item) => item.granted === true, (data) => ({
    title: data?.title ?? null,
    clips: (data?.clips ?? []).map((clip) => ({ id: clip.id, position: clip.position, ready: clip.ready === true })),
  }));
}
