// Remote text made safe to show: a model's reply may hold terminal escape sequences and control
// characters (by accident or on purpose). The CLI prints replies through this; the app shows live
// text through it too (and renders remote text as text, never HTML).

// Escape sequences (CSI, and OSC/DCS/PM/APC up to their terminator), then C0 and C1 controls.
const CONTROL =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b[\]PX^_][^\u0007\u001b]*(\u0007|\u001b\\)?|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without escape sequences and control characters (newlines and tabs kept). */
export function printable(text: string): string {
  return text.replace(CONTROL, "");
}
