/// The CSS of a row's states, on top of ``Style/css``.
extension Style {
    static let rowStateCSS = """
        .object-row.done .row-title { opacity: 0.55; }
        row:selected .avatar { box-shadow: 0 0 0 2px white; }
        """
}
