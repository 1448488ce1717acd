import Foundation
import ObjectStore

/// What the viewer opens and where its stores live.
nonisolated package struct ViewerOptions: Sendable {
    /// The dataset shown first.
    package var datasetName: String
    /// The store of the first dataset; nil for its default (``storeFolder`` or the dataset's own).
    package var storeURL: URL?
    /// A folder holding every dataset's store as `NAME.sqlite`; nil for the datasets' defaults.
    package var storeFolder: URL?
    /// When set, the window is rendered to this PNG file once it is shown, and the application quits.
    package var screenshotURL: URL?
    /// When set, ``ViewerWindow/textDump`` is written to this file after every change.
    package var dumpURL: URL?
    /// How long a save waits while another program writes the store (see
    /// ``PersistentStore/busyTimeout``); changes that still find it locked are kept and saved later.
    package var busyTimeout: TimeInterval
    /// The window's size in pixels; nil for its default (900 × 640).
    package var windowSize: (width: Int, height: Int)?
    /// Light or dark.
    package var colorScheme: ColorScheme
    /// A PostgreSQL database to share the first dataset's store through
    /// (`postgresql://USER@HOST[:PORT]/DATABASE`); the store remembers it, so that later
    /// windows share without it. Nil: the store shares when it remembers a server.
    package var shareURL: String?
    /// Whether the first dataset's store stops sharing (forgets its server) as it opens.
    package var unshare: Bool
    /// Whether the window opens as it was last closed (its size unless ``windowSize`` is
    /// given, maximized or not) and keeps its state when it closes (``WindowState``).
    package var remembersWindow = false
    /// With ``remembersWindow``: whether it also opens on the dataset it showed last (not
    /// when a dataset or a store was asked for).
    package var reopensLastDataset = false

    /// Light or dark style.
    package enum ColorScheme: Sendable {
        /// The desktop's setting (GNOME's dark style preference).
        case system
        case light
        case dark
    }

    package init(datasetName: String = "worldcup", storeURL: URL? = nil, storeFolder: URL? = nil,
                screenshotURL: URL? = nil, dumpURL: URL? = nil, busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout,
                windowSize: (width: Int, height: Int)? = nil, colorScheme: ColorScheme = .system,
                shareURL: String? = nil, unshare: Bool = false) {
        self.datasetName = datasetName
        self.storeURL = storeURL
        self.storeFolder = storeFolder
        self.screenshotURL = screenshotURL
        self.dumpURL = dumpURL
        self.busyTimeout = busyTimeout
        self.windowSize = windowSize
        self.colorScheme = colorScheme
        self.shareURL = shareURL
        self.unshare = unshare
    }

    /// The store of dataset `name`; nil for the dataset's default.
    func storeURL(for name: String) -> URL? {
        if name == datasetName, let storeURL { return storeURL }
        return storeFolder?.appendingPathComponent("\(name).sqlite")
    }
}
