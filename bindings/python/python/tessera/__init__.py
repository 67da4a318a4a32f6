"""tessera: navigation meshes for huge 3D worlds.

Bake a scene (or the generated demo world) into a navigation mesh, then query it::

    import tessera
    tessera.bake(None, "out/demo")                    # the demo world; or a .obj/.gltf/.glb path
    mesh = tessera.NavMesh("out/demo/navmesh.tsn")
    mesh.path((27.7, 85.5, 4.2), (64.8, 8.9, 2.3))    # the fields of `tessera path --json`

Points are (x, y, z) in the scene's own coordinates and up axis. Arrays are NumPy arrays.
Bakes and queries release the GIL.
"""

from ._tessera import BakeError, NavMesh, NavMeshError, TesseraError, __version__, bake

__all__ = ["BakeError", "NavMesh", "NavMeshError", "TesseraError", "__version__", "bake"]
