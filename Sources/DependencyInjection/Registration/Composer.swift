/// One piece of an app's wiring, applied to a container at launch.
///
/// A composition root gathers in one place the decisions that only the app can make:
/// which implementation another module's placeholder gets, which values are stored, which
/// environment is used. Each feature can ship its own composer, and a root composer
/// composes them:
///
/// ```swift
/// struct FeedComposer: Composer {
///     func compose(_ container: DependencyContainer) {
///         container.override(\.feedStore) { FileFeedStore(directory: .temporaryDirectory) }
///     }
/// }
///
/// struct RootComposer: Composer {
///     func compose(_ container: DependencyContainer) {
///         container.setValue("production", forKey: "environment")
///         container.compose(FeedComposer(), AnalyticsComposer())
///     }
/// }
///
/// DependencyContainer.default.compose(RootComposer())
/// ```
public protocol Composer {
    /// Applies this piece of wiring to `container`.
    ///
    /// Install overrides and store values here; resolve nothing, since other composers
    /// may still replace what a resolution would build. Call it through
    /// ``DependencyContainer/compose(_:)-(Composer...)`` rather than directly.
    ///
    /// - Parameter container: The container being composed.
    func compose(_ container: DependencyContainer)
}

extension DependencyContainer {
    /// Applies composers to this container, in order.
    ///
    /// Call it once at launch, before anything is resolved, so that every instance is
    /// built from the final wiring:
    ///
    /// ```swift
    /// DependencyContainer.default.compose(NetworkComposer(), FeedComposer())
    /// ```
    ///
    /// - Parameter composers: The composers to apply; a later one may replace what an
    ///   earlier one set up.
    public func compose(_ composers: any Composer...) {
        compose(composers)
    }

    /// Applies a list of composers to this container, in order.
    ///
    /// Use it when the list is built at run time, such as from feature flags:
    ///
    /// ```swift
    /// var composers: [any Composer] = [NetworkComposer()]
    /// if flags.newFeed { composers.append(FeedComposer()) }
    /// DependencyContainer.default.compose(composers)
    /// ```
    ///
    /// - Parameter composers: The composers to apply; a later one may replace what an
    ///   earlier one set up.
    public func compose(_ composers: [any Composer]) {
        for composer in composers { composer.compose(self) }
    }
}
