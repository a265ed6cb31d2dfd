// Every operator action asks first: a modal <dialog> that says what will happen, optionally with a field
// (a skip's output, an event's payload) and a reason (kept in the workflow's history with who acted), and runs
// the action only on its confirming button. Its two buttons say what each does: an action that is itself a
// "Cancel" is dismissed by "Keep running", never by another "Cancel".
import { useId, useRef, useState } from "preact/hooks";
import { REASON_MAX_LENGTH } from "./generated/contract.js";
import { html } from "./html.js";

/**
 * A button that opens a confirmation dialog. `run(input, reason)` performs the action (input is the field's text
 * when `field` is given; reason the optional reason's trimmed text, when `askReason` and one was typed); its error
 * is shown in the dialog, its success closes it and calls `onDone`. Children are more inputs of the dialog (an
 * event's name), kept by the caller.
 */
export function ConfirmButton({ label, title, message, field, askReason = false, confirmLabel = "Confirm", dismissLabel = "Cancel", danger = false, run, onDone, testId, children }) {
  const dialog = useRef(null);
  const titleId = useId();
  const [input, setInput] = useState(field?.initial ?? "");
  const [reason, setReason] = useState("");
  const [error, setError] = useState(undefined);
  const [busy, setBusy] = useState(false);
  const open = () => {
    setError(undefined);
    setInput(field?.initial ?? "");
    setReason("");
    dialog.current?.showModal();
  };
  const confirm = async (event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await run(input, reason.trim() || undefined);
      dialog.current?.close();
      onDone?.();
    } catch (failure) {
      setError(failure.message ?? String(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`
    <button type="button" class=${danger ? "danger" : ""} data-action=${testId ?? label} onClick=${open}>${label}</button>
    <dialog ref=${dialog} class="confirm" data-confirm=${testId ?? label} aria-labelledby=${titleId}>
      <form method="dialog" onSubmit=${confirm}>
        <h3 id=${titleId}>${title ?? label}</h3>
        <p>${message}</p>
        ${children}
        ${field &&
        html`<label>${field.label}
          <textarea name="input" rows=${field.rows ?? 4} value=${input} onInput=${(e) => setInput(e.currentTarget.value)}></textarea>
        </label>`}
        ${askReason &&
        html`<label>Reason (optional: kept in the history with your token's name)
          <input name="reason" maxlength=${REASON_MAX_LENGTH} value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
        </label>`}
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <menu>
          <button type="button" onClick=${() => dialog.current?.close()}>${dismissLabel}</button>
          <button type="submit" class=${danger ? "danger" : "primary"} disabled=${busy}>${confirmLabel}</button>
        </menu>
      </form>
    </dialog>
  `;
}
