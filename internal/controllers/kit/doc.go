// Package kit is what the typed controllers of internal/controllers/* share
// within one leadership term: informers over the member's LOCAL store
// (client-go SharedIndexInformers whose ListerWatcher reads the store and
// its change feed in process, no HTTP), clientsets whose requests go to the
// member's API handler in process (the same admission + Raft write path as
// any client), and event recorders.
//
// A Context lives for one term: the Manager builds it when this member
// gains leadership, the controllers' constructors take the informers they
// need and add their event handlers, the Manager starts the informers,
// waits for their caches, runs the controllers and, when the term ends,
// waits for every goroutine the Context started (Shutdown).
//
// Concurrency: Informers.Informer and Context.Client/Recorder may be called
// from any goroutine; informers asked for after Start are started at once.
// Objects handed out by informers and listers are shared caches: never
// modify them, DeepCopy first.
package kit
