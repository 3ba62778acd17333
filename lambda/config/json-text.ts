/**
 * JSON.parse for config files people edit by hand: a syntax error says where, as line and column
 * with the line itself and a caret under the spot, whatever Node version words the error (V8 adds
 * "(line L column C)" to some messages only, and to none at the end of the input).
 */
export function parseJsonText(text: string): unknown {
  // A byte order mark (some editors write one) is not JSON, but is not a mistake either.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (error) {
    const message = (error as Error).message;
    const at = /at position (\d+)/.exec(message);
    const offset = at ? Number(at[1]) : /end of JSON input/.test(message) ? body.trimEnd().length : undefined;
    const reason = message.replace(/\s*\(line \d+ column \d+\)$/, '').replace(/( in JSON)? at position \d+$/, '');
    if (offset === undefined) throw new Error(`not valid JSON: ${reason}`);
    const { line, column, text: lineText } = locate(body, offset);
    const gutter = String(line).length;
    const excerpt = `  ${line} | ${lineText}\n  ${' '.repeat(gutter)} | ${' '.repeat(column - 1)}^`;
    throw new Error(`not valid JSON at line ${line}, column ${column}: ${reason}\n${excerpt}`);
  }
}

/** 1-based line and column of a character offset, and that line's text (tabs shown as spaces, so the caret lines up). */
function locate(text: string, offset: number): { line: number; column: number; text: string } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  const lineText = text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd).replace(/\r$/, '');
  return { line, column: offset - lineStart + 1, text: lineText.replace(/\t/g, ' ') };
}
