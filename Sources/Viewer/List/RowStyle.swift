/// The CSS of a row's states, on top of ``Style/css``.
extension Style {
    static let rowStateCSS = """
        /* Dimmed by its colour's alpha, which keeps 4.5:1 with the row (opacity 0.55 gave 3.2:1). */
        .object-row.done .row-title { color: alpha(currentColor, 0.7); }
        row:selected .object-row.done .row-title { color: alpha(currentColor, 0.85); }
        row:selected .avatar { box-shadow: 0 0 0 2px white; }
        """
}
