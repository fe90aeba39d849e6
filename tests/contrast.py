"""WCAG contrast measured in headless Chromium, for the tower's overlay and the hub's."""

from __future__ import annotations

__all__ = ["BLACK", "CONTRAST_JS", "WHITE"]

#: WCAG 2.x contrast of an element's text against what is behind it, from the computed styles:
#: every background from the page down to the element is composited over ``backdrop`` (the
#: page itself is transparent: OBS puts it over the stream), with the element's opacity.
CONTRAST_JS = """
([selector, backdrop]) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    const [r, g, b, a] = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a === undefined ? 1 : a];
  };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]));
  const lum = (rgb) => {
    const linear = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
    const [r, g, b] = rgb.map(linear);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return [...document.querySelectorAll(selector)].map((node) => {
    const chain = [];
    let opacity = 1;
    for (let e = node; e; e = e.parentElement) {
      const style = getComputedStyle(e);
      chain.unshift(parse(style.backgroundColor));
      opacity *= Number(style.opacity);
    }
    let bg = backdrop;
    for (const layer of chain) bg = over(layer, bg);
    const fg = parse(getComputedStyle(node).color);
    const text = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
    const [hi, lo] = [lum(text), lum(bg)].sort((a, b) => b - a);
    return [node.textContent, (hi + 0.05) / (lo + 0.05)];
  });
}
"""

WHITE, BLACK = [255, 255, 255], [0, 0, 0]
