import htm from 'htm';
import { h } from 'preact';

/**
 * Markup as tagged templates (htm), rendered by Preact: every interpolated value is text or an
 * attribute value, never parsed as HTML. The console never assigns markup to an element (a key
 * or model name carrying markup is shown as text).
 */
export const html = htm.bind(h);
