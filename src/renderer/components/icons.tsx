// Inline SVG icons (no icon fonts, no remote resources). Decorative: hidden from assistive tech,
// the surrounding text always carries the meaning — unless given a `label`, when the icon is the
// meaning (an image named for assistive tech: no extra hidden text node in every table row).
import type { ReactElement } from 'react';

type P = { className?: string; label?: string };
const base = (className: string | undefined, children: ReactElement | ReactElement[], label?: string) => (
  <svg
    className={className ? `icon ${className}` : 'icon'}
    viewBox="0 0 16 16"
    width="16"
    height="16"
    fill="none"
    stroke="currentColor"
    strokeWidth="1.5"
    strokeLinecap="round"
    strokeLinejoin="round"
    {...(label ? { role: 'img', 'aria-label': label } : { 'aria-hidden': true })}
    focusable="false"
  >
    {children}
  </svg>
);

export const ShieldIcon = ({ className }: P) =>
  base(className, [
    <path key="s" d="M8 1.75 2.75 3.5v4c0 3.1 2.2 5.6 5.25 6.75 3.05-1.15 5.25-3.65 5.25-6.75v-4z" />,
    <path key="c" d="m5.75 8 1.6 1.6 3-3.1" />,
  ]);
export const ClockIcon = ({ className }: P) =>
  base(className, [<circle key="c" cx="8" cy="8" r="6.25" />, <path key="h" d="M8 4.5V8l2.25 1.5" />]);
export const SlashIcon = ({ className }: P) =>
  base(className, [<circle key="c" cx="8" cy="8" r="6.25" />, <path key="l" d="m3.6 12.4 8.8-8.8" />]);
export const RefreshIcon = ({ className }: P) =>
  base(className, [<path key="a" d="M13.25 8a5.25 5.25 0 1 1-1.54-3.71" />, <path key="b" d="M13.25 2.5v3h-3" />]);
export const PlusIcon = ({ className }: P) => base(className, <path d="M8 3v10M3 8h10" />);
export const SearchIcon = ({ className }: P) =>
  base(className, [<circle key="c" cx="7" cy="7" r="4.25" />, <path key="l" d="m10.25 10.25 3 3" />]);
export const EditIcon = ({ className }: P) =>
  base(className, <path d="M10.5 2.75 13.25 5.5 6 12.75H3.25V10z" />);
export const TrashIcon = ({ className }: P) =>
  base(className, [
    <path key="a" d="M2.75 4.25h10.5M6.25 4.25V2.75h3.5v1.5" />,
    <path key="b" d="M4 4.25 4.75 13.25h6.5L12 4.25" />,
  ]);
export const TagIcon = ({ className, label }: P) =>
  base(
    className,
    [<path key="a" d="M2.25 2.25h5.5l6 6-5.5 5.5-6-6z" />, <circle key="b" cx="5.25" cy="5.25" r="0.9" />],
    label,
  );
export const HashIcon = ({ className, label }: P) => base(className, <path d="M6 2 4.5 14M11.5 2 10 14M2.5 5.5h11M2 10.5h11" />, label);
export const ServerIcon = ({ className }: P) =>
  base(className, [
    <rect key="a" x="2.25" y="2.25" width="11.5" height="5" rx="1" />,
    <rect key="b" x="2.25" y="8.75" width="11.5" height="5" rx="1" />,
    <path key="c" d="M4.75 4.75h.01M4.75 11.25h.01" />,
  ]);
export const KeyIcon = ({ className }: P) =>
  base(className, [<circle key="a" cx="5" cy="11" r="2.75" />, <path key="b" d="m7 9 6.25-6.25M11 5l1.75 1.75" />]);
export const AlertIcon = ({ className }: P) =>
  base(className, [
    <path key="a" d="M8 1.75 1.25 13.75h13.5z" />,
    <path key="b" d="M8 6.25v3.25M8 11.75h.01" />,
  ]);
export const LogoIcon = ({ className }: P) => (
  <svg className={className ? `icon ${className}` : 'icon'} viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false">
    <path d="M12 2 4 5v6c0 5 3.4 9.3 8 11 4.6-1.7 8-6 8-11V5z" fill="currentColor" opacity="0.18" />
    <path d="M12 2 4 5v6c0 5 3.4 9.3 8 11 4.6-1.7 8-6 8-11V5z" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinejoin="round" />
    <path d="M8.5 12.5h7M12 8v8.5" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
  </svg>
);
export const ChevronIcon = ({ className }: P) => base(className, <path d="m6 3.75 4.25 4.25L6 12.25" />);
export const CheckIcon = ({ className }: P) => base(className, <path d="m3.25 8.25 3 3 6.5-6.5" />);
export const CrossIcon = ({ className }: P) => base(className, <path d="m4 4 8 8M12 4l-8 8" />);
export const ArrowRightIcon = ({ className }: P) => base(className, <path d="M2.75 8h10.5M9.5 4.25 13.25 8 9.5 11.75" />);
export const BoxIcon = ({ className }: P) =>
  base(className, [
    <path key="a" d="M2.25 4.75 8 2l5.75 2.75v6.5L8 14l-5.75-2.75z" />,
    <path key="b" d="M2.25 4.75 8 7.5l5.75-2.75M8 7.5V14" />,
  ]);
export const InfoIcon = ({ className }: P) =>
  base(className, [<circle key="a" cx="8" cy="8" r="6.25" />, <path key="b" d="M8 7.25v4M8 4.75h.01" />]);
export const UnlockIcon = ({ className }: P) =>
  base(className, [
    <rect key="a" x="3" y="7.25" width="10" height="6.5" rx="1" />,
    <path key="b" d="M5.25 7.25V5a2.75 2.75 0 0 1 5.3-1" />,
  ]);
export const UploadIcon = ({ className }: P) =>
  base(className, [<path key="a" d="M8 10.5V2.75M4.75 6 8 2.75 11.25 6" />, <path key="b" d="M2.75 10.75v2.5h10.5v-2.5" />]);
export const CopyIcon = ({ className }: P) =>
  base(className, [<rect key="a" x="5.25" y="5.25" width="8" height="8" rx="1" />, <path key="b" d="M10.75 5.25v-2.5h-8v8h2.5" />]);
export const FolderIcon = ({ className }: P) =>
  base(className, <path d="M1.75 4.25v8.5h12.5v-7h-6.5l-1.5-1.5z" />);
export const ListIcon = ({ className }: P) => base(className, <path d="M5.5 4h8M5.5 8h8M5.5 12h8M2.5 4h.01M2.5 8h.01M2.5 12h.01" />);
export const GridIcon = ({ className }: P) =>
  base(className, [
    <rect key="a" x="2.25" y="2.25" width="4.5" height="4.5" rx="1" />,
    <rect key="b" x="9.25" y="2.25" width="4.5" height="4.5" rx="1" />,
    <rect key="c" x="2.25" y="9.25" width="4.5" height="4.5" rx="1" />,
    <rect key="d" x="9.25" y="9.25" width="4.5" height="4.5" rx="1" />,
  ]);
