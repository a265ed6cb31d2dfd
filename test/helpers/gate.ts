/** A promise the test resolves when it chooses, to hold a remote or a write at a point of its choosing. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
