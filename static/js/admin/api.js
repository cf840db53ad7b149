// The admin API (/api/admin/...): same-origin calls carrying the session cookie.

/** Call the admin API; throws an Error with ``code`` and ``status``. A 401 sends the browser to
 * the sign-in form. */
export async function adminApi(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const reply = await fetch(`/api/admin${path}`, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = reply.status === 204 ? null : await reply.json();
  } catch {
    data = null;
  }
  if (!reply.ok) {
    const detail = data?.detail;
    const error = new Error(detail?.message ?? (Array.isArray(detail) ? detail.map((d) => d.msg).join("; ") : reply.statusText));
    error.code = detail?.code ?? `http_${reply.status}`;
    error.status = reply.status;
    if (reply.status === 401 && !path.startsWith("/login")) location.assign("/admin/login");
    throw error;
  }
  return data;
}

/** A query string of the non-empty values of ``params``. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== "") q.set(key, value);
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** "2026-11-30 12:41 UTC" from an ISO time. */
export function when(iso) {
  if (!iso) return "–";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
