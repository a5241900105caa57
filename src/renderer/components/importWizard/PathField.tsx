// A field for paths on this machine, typed or pasted, added with Enter or Add: the archives to
// import and the key and bundle files to verify with share it. Its owner keeps the text and the
// error, and decides what a submitted path means.
import { useId, type ClipboardEvent, type ReactNode, type RefObject } from 'react';

export interface PathFieldProps {
  label: string;
  placeholder: string;
  help: ReactNode;
  text: string;
  error: string | null;
  /** The text changed (the owner clears its error). */
  onText: (text: string) => void;
  onSubmit: () => void;
  onPaste?: (e: ClipboardEvent<HTMLInputElement>) => void;
  inputRef?: RefObject<HTMLInputElement | null>;
  /** Buttons after Add (the desktop's file dialog). */
  children?: ReactNode;
}

export function PathField(p: PathFieldProps) {
  const fieldId = useId();
  const helpId = useId();
  return (
    <form
      className="path-form"
      onSubmit={(e) => {
        e.preventDefault();
        p.onSubmit();
      }}
    >
      <div className="field">
        <label htmlFor={fieldId}>{p.label}</label>
        <div className="path-row">
          <input
            ref={p.inputRef}
            id={fieldId}
            className="mono"
            type="text"
            value={p.text}
            spellCheck={false}
            autoComplete="off"
            placeholder={p.placeholder}
            aria-describedby={helpId}
            aria-invalid={p.error ? true : undefined}
            onChange={(e) => p.onText(e.target.value)}
            onPaste={p.onPaste}
          />
          <button type="submit" className="btn">
            Add
          </button>
          {p.children}
        </div>
        {p.error ? (
          <p className="field-error" role="alert">
            {p.error}
          </p>
        ) : (
          <p className="help" id={helpId}>
            {p.help}
          </p>
        )}
      </div>
    </form>
  );
}
