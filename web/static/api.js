// Calls to the Lens REST API (docs/api.md): the envelope
// {"code","data","message"} unwrapped, errors as ApiError with the HTTP
// status and the server's message, and the bearer token the user entered
// (kept in localStorage) sent on every call.

const TOKEN_KEY = 'lens.token';

export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.name = 'ApiError';
    this.status = status;  // HTTP status; 0 when the server was not reached
    this.path = path;
  }
}

export function token() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';  // storage disabled (a sandboxed frame): no token
  }
}

export function setToken(value) {
  try {
    if (value) {
      localStorage.setItem(TOKEN_KEY, value);
    } else {
      localStorage.removeItem(TOKEN_KEY);
    }
  } catch {
    // The token then lasts for this page view only (kept nowhere).
  }
}

// GET `path` ("/api/v1/nodes?..."): the envelope's data, or throws ApiError
// (401 when a token is needed or wrong).
export async function get(path, {signal} = {}) {
  const headers = {Accept: 'application/json'};
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  let res;
  try {
    res = await fetch(path, {headers, signal, cache: 'no-store'});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, `cannot reach the Lens API (${e.message})`, path);
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    // An answer that is not JSON (a proxy's error page): the status says it.
  }
  if (!res.ok || !body || body.code !== 0) {
    const message = body && body.message ? body.message : `HTTP ${res.status}`;
    throw new ApiError(res.ok ? 500 : res.status, message, path);
  }
  return body.data;
}

// For routes that may be absent or have no backend (404, 405, 501, 503):
// {data} when answered, {unavailable: ApiError} otherwise. 401 and other
// errors still throw.
export async function optional(path, options) {
  try {
    return {data: await get(path, options)};
  } catch (e) {
    if (e instanceof ApiError && [404, 405, 501, 503].includes(e.status)) {
      return {unavailable: e};
    }
    throw e;
  }
}

// "/api/v1/x" + {a: 1, b: ''} -> "/api/v1/x?a=1" (empty values left out).
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
