// metabench leaderboard: sortable tables. Plain JS, no dependencies.
// A header button sorts its column; cells with data-value sort as numbers, others as text.
// Empty values stay last in both directions; a second click reverses the order.
"use strict";

function cellKey(row, index) {
  const cell = row.cells[index];
  if (!cell) return null;
  if (cell.dataset.value !== undefined) {
    return cell.dataset.value === "" ? null : Number(cell.dataset.value);
  }
  const text = cell.textContent.trim();
  return text === "" || text === "—" ? null : text.toLowerCase();
}

function compareKeys(a, b) {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

function sortTable(table, index, header) {
  const ascending = header.getAttribute("aria-sort") !== "ascending";
  for (const other of table.tHead.rows[0].cells) other.removeAttribute("aria-sort");
  header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows).map((row, position) => ({ row, position, key: cellKey(row, index) }));
  rows.sort((x, y) => {
    if (x.key === null || y.key === null) {
      return x.key === y.key ? x.position - y.position : (x.key === null ? 1 : -1);
    }
    return (ascending ? 1 : -1) * compareKeys(x.key, y.key) || x.position - y.position;
  });
  for (const item of rows) body.appendChild(item.row);
}

document.querySelectorAll("table.sortable").forEach((table) => {
  Array.from(table.tHead.rows[0].cells).forEach((header, index) => {
    const button = header.querySelector("button");
    if (button) button.addEventListener("click", () => sortTable(table, index, header));
  });
});
