// Backs the heap with 2 MiB pages where the kernel allows it (transparent huge pages in "always"
// or "madvise" mode).
//
// On the virtual machines this runs on, a first touch of a 4 KiB page costs about 12 us (2048 of
// them measured at 11.5 us each), and a 128-host run touched some 850 pages before its first
// event: 10 ms of the 28 ms it spent outside the event loop. glibc grows its heap a little at a
// time, too little for the kernel to back any of it with huge pages, so the heap is grown once by a
// reserve that costs address space but no memory until touched, and the reserve is advised into
// huge pages. Blocks up to glibc's largest mmap threshold come from it too, rather than from
// mappings of their own in small pages. Fewer, larger pages also mean fewer TLB misses in the
// event loop. Measured: 857 -> 256 page faults for that run's set-up; whole-process medians of
// Incast-128 (4000 B) 91 -> 78 ms and Perm-128 (4000 B) 97 -> 85 ms; a few more megabytes at peak.
//
// Does nothing where malloc is not glibc's (sanitizer builds replace it).
#pragma once

namespace lockstep {

void back_heap_with_huge_pages();

}  // namespace lockstep
