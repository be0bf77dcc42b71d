// Package readme runs README.md's command blocks, so that a block that
// fails when pasted into a shell fails the tests.
//
// Every fenced ```sh block of README.md carries a marker comment on the line
// right before its opening fence:
//
//	<!-- test: run -->                  run in a shell of its own
//	<!-- test: run session=NAME -->     run in the shell of every block marked
//	                                    session=NAME, in README order: variables,
//	                                    the working directory and background
//	                                    processes carry over, as when the blocks
//	                                    are pasted one after the other
//	<!-- test: covered-by=PATH [TestX ...] -->
//	                                    not run here (it needs the real-node
//	                                    harness, root, or is the suite itself);
//	                                    PATH, and each TestX in PATH's tests, must
//	                                    exist
//
// run markers take timeout=DURATION (default 6m) for each block. A block
// without a marker, or a marker without a block, fails the test.
//
// The blocks run with `bash -e` (a failing command fails the block; a
// command the README expects to fail is written `! cmd`) in a copy of the
// repository's tracked files, with HOME, KUBECONFIG and TMPDIR inside the
// test's temporary directory, every 127.0.0.1/localhost port of 1024 and
// up replaced by a free port chosen at run time (the same README port gets
// the same free port in every block), /tmp/ replaced by the temporary
// directory, and LITEK8S_API_ADDR and LITEK8S_RAFT_ADDR set to the ports
// that replace 6443 and 7000 (the defaults of a `node` started without
// flags). Each shell is a process group of its own: when its last block has
// run (or one failed), the group is sent SIGTERM, then SIGKILL, so nothing a
// block left in the background survives the test.
package readme
