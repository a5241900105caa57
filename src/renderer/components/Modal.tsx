import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';

/** Tab and Shift+Tab wrap inside the dialog instead of leaving it for the browser's own UI. */
function trapTab(e: KeyboardEvent<HTMLDialogElement>) {
  if (e.key !== 'Tab') return;
  const items = [...e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.offsetParent !== null);
  if (items.length === 0) return;
  const first = items[0]!;
  const last = items[items.length - 1]!;
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !e.currentTarget.contains(active))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && active === last) {
    e.preventDefault();
    first.focus();
  }
}

/**
 * Native modal <dialog>: the rest of the page is inert and Escape closes it (both by the
 * browser); Tab wraps inside it (trapTab) rather than escaping to the browser's own UI.
 * aria-modal is stated too, for older screen readers.
 */
export function Modal(props: { title: string; onClose(): void; children: ReactNode; className?: string; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className={`modal ${props.className ?? ''}`}
      aria-labelledby={titleId}
      aria-modal="true"
      data-testid={props.testId}
      onKeyDown={trapTab}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId} className="modal-title">
        {props.title}
      </h2>
      {props.children}
    </dialog>
  );
}
