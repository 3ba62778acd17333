/**
 * The admin API as the page calls it (docs/admin-api.md): same origin, the session cookie sent
 * by the browser, and every change carrying the session's CSRF token.
 */
let csrfToken: string | undefined;

export function setCsrf(token: string | undefined): void {
  csrfToken = token;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;

  constructor(status: number, message: string, code?: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Called when a call finds the session gone (401): the page shows the sign-in screen. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(`/admin/api${path}`, { method, headers, credentials: 'same-origin', cache: 'no-store', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (!response.ok) {
    let error: { message?: string; code?: string } | undefined;
    try {
      error = ((await response.json()) as { error?: { message?: string; code?: string } }).error;
    } catch {
      // Not JSON (a proxy's page): the status says enough.
    }
    if (response.status === 401 && path !== '/session') onSignedOut();
    throw new ApiError(response.status, error?.message ?? `The gateway answered ${response.status}.`, error?.code);
  }
  return (await response.json()) as T;
}

export const api = {
  get: <T>(path: string) => call<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => call<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
};

/** A query string from the defined values. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
