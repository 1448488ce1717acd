// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "FetchedResults",
    products: [
        .library(name: "ObjectStore", targets: ["ObjectStore"]),
        .library(name: "FetchedResults", targets: ["FetchedResults"]),
        .library(name: "GtkBinding", targets: ["GtkBinding"]),
        .library(name: "Sharing", targets: ["Sharing"]),
        .executable(name: "fetched-results", targets: ["fetched-results"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // Already postgres-nio's (its TLS); named for the TLS settings of ServerConfiguration.
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
    ],
    targets: [
        .target(
            name: "TestSupport",
            path: "Tests/TestSupport"
        ),
        // The World Cup model and its rows, shared by the tests of ObjectStore and FetchedResults.
        .target(
            name: "ObjectStoreTestSupport",
            dependencies: ["TestSupport", "ObjectStore"],
            path: "Tests/ObjectStoreTestSupport"
        ),
        // The League model, its random edits and the checks of a controller's batches, shared
        // by the tests of FetchedResults and of GtkBinding; TestSupport stays free of our modules.
        .target(
            name: "FetchedResultsTestSupport",
            dependencies: ["TestSupport", "FetchedResults", "ObjectStore"],
            path: "Tests/FetchedResultsTestSupport"
        ),
        .target(
            name: "ObjectStore",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "FetchedResults",
            dependencies: ["ObjectStore"]
        ),
        .target(
            name: "Datasets",
            dependencies: ["ObjectStore", "FetchedResults"]
        ),
        // Beside the store: only apps that share a store through PostgreSQL depend on it.
        .target(
            name: "Sharing",
            dependencies: ["ObjectStore", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        .systemLibrary(
            name: "CAdw",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev"])]
        ),
        .target(
            name: "CFetchedResultsModel",
            dependencies: ["CGtk"]
        ),
        .target(
            name: "GtkBinding",
            dependencies: ["CGtk", "CFetchedResultsModel", "FetchedResults", "ObjectStore"]
        ),
        .target(
            name: "CViewer",
            dependencies: ["CGtk"]
        ),
        .target(
            name: "Viewer",
            dependencies: ["CGtk", "CAdw", "CViewer", "CFetchedResultsModel", "GtkBinding", "Datasets", "FetchedResults", "ObjectStore", "Sharing"],
            // GTK runs on the main thread: so does every declaration of the app.
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        .executableTarget(
            name: "fetched-results",
            dependencies: [
                "ObjectStore",
                "FetchedResults",
                "Datasets",
                "Viewer",
                "Sharing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "fetched-results-benchmark",
            dependencies: ["ObjectStore", "FetchedResults", "Datasets", "Viewer", "GtkBinding", "CGtk", "CFetchedResultsModel", "Sharing",
                           .product(name: "GRDB", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
        .testTarget(
            name: "FetchedResultsTests",
            dependencies: ["TestSupport", "ObjectStoreTestSupport", "FetchedResultsTestSupport", "FetchedResults", "ObjectStore", "Datasets"]
        ),
        .testTarget(
            name: "ObjectStoreTests",
            dependencies: ["TestSupport", "ObjectStoreTestSupport", "ObjectStore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "SharingTests",
            dependencies: ["TestSupport", "Sharing", "ObjectStore", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "GtkBindingTests",
            dependencies: ["TestSupport", "FetchedResultsTestSupport", "GtkBinding", "CGtk", "CFetchedResultsModel", "FetchedResults", "ObjectStore"]
        ),
        .testTarget(
            name: "ViewerTests",
            dependencies: ["TestSupport", "Viewer", "GtkBinding", "Datasets", "CGtk", "CAdw", "FetchedResults", "ObjectStore", "Sharing",
                           .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
    ]
)
