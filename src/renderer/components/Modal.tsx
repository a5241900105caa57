import { useEffect, useId, useRef, type ReactNode } from 'react';

/**
 * Native modal <dialog>: focus is trapped and Escape closes it, both by the browser; the rest
 * of the page is inert while it is open. aria-modal is stated too, for older screen readers.
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
