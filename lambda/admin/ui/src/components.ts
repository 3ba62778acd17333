import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { local, usd, utc } from './format.ts';
import { html } from './html.ts';

/** A time in the viewer's zone; the UTC time on hover. */
export function Time({ iso, seconds = false }: { iso: string | number | null | undefined; seconds?: boolean }) {
  if (iso === null || iso === undefined) return html`<span class="muted">never</span>`;
  const at = new Date(iso).toISOString();
  return html`<time datetime=${at} title=${utc(at)}>${local(at, seconds)}</time>`;
}

export function Money({ micro }: { micro: number }) {
  return html`<span class="money">${usd(micro)}</span>`;
}

/** What to do when there is nothing to show. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return html`<div class="empty"><p class="empty-title">${title}</p>${children}</div>`;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error instanceof Error ? error.message : String(error)}</p>`;
}

export function Loading() {
  return html`<p class="muted" role="status">Loading…</p>`;
}

/** A wide table in a scrolling region that keyboard users can reach (phones scroll it sideways). */
export function Scroll({ label, children }: { label: string; children: ComponentChildren }) {
  return html`<div class="scroll" role="region" aria-label=${label} tabindex="0">${children}</div>`;
}

/**
 * A modal dialog (the browser's own <dialog>: focus moves in and is held there, Escape closes
 * it, focus returns to where it was).
 */
export function Dialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  // Closed because it is going away (another dialog replaces it): not the person closing it.
  const leaving = useRef(false);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      leaving.current = true;
      dialog?.close();
    };
  }, []);
  const closed = () => {
    if (!leaving.current) onClose();
  };
  const id = `dialog-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return html`<dialog ref=${ref} aria-labelledby=${id} onClose=${closed}>
    <div class="dialog-head"><h2 id=${id}>${title}</h2><button type="button" class="link" onClick=${onClose} aria-label="Close">Close</button></div>
    ${children}
  </dialog>`;
}
