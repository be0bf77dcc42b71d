// Package memtrim gives back, once a process has started, the memory that
// only its start-up used: garbage left on the heap, and the pages of its own
// executable that package initialisation and start-up touched.
//
// A Go binary's package inits run code and read type data spread over most
// of its text and read-only data. The kernel maps file pages in 64 KiB
// blocks around each fault, so a member of litek8s holds about 25 MiB of
// its 58 MB executable before main even runs, and keeps them mapped (and
// counted in its RSS) for its whole life though it never runs that code
// again. Trim unmaps the read-only segments of the executable with
// MADV_DONTNEED: their pages stay in the page cache, where the kernel
// reclaims them first, and what the process runs again is mapped back by
// the next fault. Writable mappings, and read-only ones holding any page
// the process modified (RELRO), are left alone.//
// Concurrency: Trim holds no lock and no state; call it once, after
// start-up (it reads /proc/self/maps and advises the kernel).
package memtrim
